// chokepoint: finds what is choking an AI workload on NVIDIA GPUs and says what to change.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "base/version.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error 2, as each command's help says
    // (CLI11's own codes, 105-115, would read as the wrapped command's exit status).
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("watch")) return watch();
    if (app.got_subcommand("analyze")) return analyze();
    if (app.got_subcommand("doctor")) return doctor();
    if (app.got_subcommand("bench")) return bench();
  } catch (const std::exception& e) {  // last resort: a message, never a crash trace
    std::fprintf(stderr, "chokepoint: internal error: %s\n", e.what());
    return 70;
  }
  return 2;
}
