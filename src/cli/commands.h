// Subcommands of the chokepoint CLI: each one registers its options on the CLI11 app and
// returns the function that runs it (one file per subcommand, DESIGN.md).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace chokepoint::cli {

using RunFn = std::function<int()>;

RunFn add_run_command(CLI::App& app);
RunFn add_watch_command(CLI::App& app);
RunFn add_analyze_command(CLI::App& app);
RunFn add_doctor_command(CLI::App& app);
RunFn add_bench_command(CLI::App& app);

}  // namespace chokepoint::cli
