// Subcommands of the chokepoint CLI: each one registers its options on the CLI11 app and
// returns the function that runs it (one file per subcommand).
#pragma once

#include <functional>
#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "report/formats.h"

namespace chokepoint::cli {

using RunFn = std::function<int()>;

RunFn add_run_command(CLI::App& app);
RunFn add_watch_command(CLI::App& app);
RunFn add_analyze_command(CLI::App& app);
RunFn add_doctor_command(CLI::App& app);
RunFn add_bench_command(CLI::App& app);
RunFn add_explain_command(CLI::App& app);
RunFn add_trace_command(CLI::App& app);
RunFn add_diff_command(CLI::App& app);
// `diff B1 B2 -- A1 A2`: CLI11 ends a subcommand's positionals at "--", so main() puts this
// word in its place and the diff command splits its runs there.
inline constexpr const char* kDiffSeparator = "\x01--after";
RunFn add_tune_command(CLI::App& app);
RunFn add_kernels_command(CLI::App& app);
RunFn add_serve_command(CLI::App& app);

// Formats a command takes beside the report formats (analyze's trace exports): which
// names, and how they are listed in help and errors.
struct MoreFormats {
  std::function<bool(const std::string&)> accepts;
  std::string names;  // "chrome (perfetto)"
};

// -f,--format for a command that offers `offered` (report/formats.h, the one list): a name
// outside them (and `more`) is a usage error before the command runs, naming what it takes.
CLI::Option* add_format_option(CLI::App* cmd, std::string* format, std::span<const report::Format> offered,
                               const std::string& help, const MoreFormats& more = {});

// --ceilings FILE and --no-saved-profile, shared by analyze, run and watch (analyze_command.cc).
void add_ceilings_options(CLI::App* cmd, std::string* file, bool* no_saved_profile);

}  // namespace chokepoint::cli
