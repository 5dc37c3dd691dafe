// chokepoint: finds what is choking an AI workload on NVIDIA GPUs and says what to change.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "base/terminal_text.h"
#include "base/version.h"
#include "cli/commands.h"

namespace {

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
  auto run = chokepoint::cli::add_run_command(app);
  auto watch = chokepoint::cli::add_watch_command(app);
  auto analyze = chokepoint::cli::add_analyze_command(app);
  auto doctor = chokepoint::cli::add_doctor_command(app);
  auto bench = chokepoint::cli::add_bench_command(app);
  auto explain = chokepoint::cli::add_explain_command(app);
  // `chokepoint bogus`: CLI11 would say "A subcommand is required", which reads as if
  // the word were missing rather than wrong.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string word = argv[1];
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      known = known || sub->get_name() == word;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "chokepoint: unknown command '%s' (commands: %s; see chokepoint --help)\n",
                   chokepoint::escape_controls(word).c_str(), names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error 2, as each command's help says
    // (CLI11's own codes, 105-115, would read as the wrapped command's exit status).
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11 quotes the arguments it rejects: shown with control characters as escapes.
    std::fprintf(stderr, "chokepoint: %s\nRun with --help for more information.\n",
                 chokepoint::escape_controls(e.what()).c_str());
    return 2;
  }
  try {
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("watch")) return watch();
    if (app.got_subcommand("analyze")) return analyze();
    if (app.got_subcommand("doctor")) return doctor();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("explain")) return explain();
  } catch (const std::exception& e) {  // last resort: a message, never a crash trace
    std::fprintf(stderr, "chokepoint: internal error: %s\n", e.what());
    return 70;
  }
  return 2;
}
