// chokepoint: finds what is choking an AI workload on NVIDIA GPUs and says what to change.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/terminal_text.h"
#include "base/version.h"
#include "cli/commands.h"
#include "cli/exit_status.h"

namespace {

using chokepoint::cli::kExitInternal;
using chokepoint::cli::kExitUsage;

// Started with fd 0, 1 or 2 closed (`2>&-`), the next file chokepoint opens would get that
// number: samples.jsonl as fd 2 would receive chokepoint's own messages. /dev/null takes
// each closed one first (open returns the lowest free descriptor).
void guard_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got >= 0 && got != fd) {  // a lower one was open after all: put it where it belongs
      dup2(got, fd);
      close(got);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  guard_standard_fds();
  CLI::App app{"chokepoint " CHOKEPOINT_VERSION
               ": find what limits a GPU/AI workload, with the evidence and the gain to expect."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("chokepoint ") + CHOKEPOINT_VERSION);
  app.footer("Run 'chokepoint COMMAND --help' for the options of a command.");
  // The subcommands, in the order --help lists them: each registers itself (its name,
  // options, help) and returns the function that runs it.
  using AddCommand = chokepoint::cli::RunFn (*)(CLI::App&);
  constexpr AddCommand kCommands[] = {
      chokepoint::cli::add_run_command,     chokepoint::cli::add_watch_command,   chokepoint::cli::add_trace_command,
      chokepoint::cli::add_analyze_command, chokepoint::cli::add_diff_command,    chokepoint::cli::add_doctor_command,
      chokepoint::cli::add_bench_command,   chokepoint::cli::add_explain_command, chokepoint::cli::add_tune_command,
      chokepoint::cli::add_kernels_command, chokepoint::cli::add_serve_command,
  };
  std::vector<std::pair<CLI::App*, chokepoint::cli::RunFn>> commands;
  for (AddCommand add : kCommands) {
    chokepoint::cli::RunFn run = add(app);
    commands.emplace_back(app.get_subcommands([](const CLI::App*) { return true; }).back(), std::move(run));
  }
  // `chokepoint bogus`: CLI11 would say "A subcommand is required", which reads as if
  // the word were missing rather than wrong.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    bool known = false;
    std::string names;
    for (const auto& [sub, run] : commands) {
      known = known || sub->get_name() == word;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "chokepoint: unknown command '%s' (commands: %s; see chokepoint --help)\n",
                   chokepoint::escape_controls(word).c_str(), names.c_str());
      return kExitUsage;
    }
  }
  std::vector<char*> args(argv, argv + argc);
  std::string separator = chokepoint::cli::kDiffSeparator;
  if (argc > 2 && std::string_view(argv[1]) == "diff") {
    for (int i = 2; i < argc; ++i) {
      if (std::string_view(argv[i]) == "--") {
        args[i] = separator.data();
        break;
      }
    }
  }
  try {
    app.parse(argc, args.data());
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error 2, as each command's help says
    // (CLI11's own codes, 105-115, would read as the wrapped command's exit status).
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11 quotes the arguments it rejects: shown with control characters as escapes.
    std::fprintf(stderr, "chokepoint: %s\nRun with --help for more information.\n",
                 chokepoint::escape_controls(e.what()).c_str());
    return kExitUsage;
  }
  try {
    for (const auto& [sub, run] : commands) {
      if (sub->parsed()) return run();
    }
  } catch (const std::exception& e) {  // last resort: a message, never a crash trace
    std::fprintf(stderr, "chokepoint: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return kExitUsage;
}
