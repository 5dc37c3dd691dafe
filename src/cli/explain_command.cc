// chokepoint explain [ID]: what a finding, remedy, verdict or evidence metric means, how it
// is detected and what to do (the glossary lives in rules/glossary.cc and
// rules/metric_glossary.cc).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "base/terminal_text.h"
#include "cli/commands.h"
#include "rules/glossary.h"

namespace chokepoint::cli {
namespace {

int run_explain_command(const std::string& id) {
  if (id.empty()) {
    std::cout << rules::format_glossary_index() << std::flush;
    return 0;
  }
  const auto* e = rules::find_glossary_entry(id);
  if (e == nullptr) {
    std::fprintf(stderr,
                 "chokepoint: unknown id '%s': not a finding, remedy, verdict, report term or metric (run "
                 "'chokepoint explain' for the list)\n",
                 escape_controls(id).c_str());
    return 2;
  }
  std::cout << rules::format_glossary_entry(*e) << std::flush;
  return 0;
}

}  // namespace

RunFn add_explain_command(CLI::App& app) {
  auto id = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "explain", "Say what a finding, remedy, verdict or evidence metric means, how it is detected and what to do");
  cmd->add_option("ID", *id,
                  "A finding id (host-sync), a remedy id (cuda-graphs), a verdict (input, host, sync, transfer, "
                  "compute, memory, communication, io, idle, unknown), a report term (confidence) or an evidence "
                  "metric as the report prints it (sub_wave_kernel_pct, or \"sub wave kernel pct\"); without it, "
                  "every id");
  cmd->footer(
      "Examples:\n  chokepoint explain\n  chokepoint explain input-pipeline-stall\n"
      "  chokepoint explain defer-syncs\n  chokepoint explain memory\n  chokepoint explain sub_wave_kernel_pct\n"
      "Exit status: 0, or 2 for an unknown id.");
  return [id] { return run_explain_command(*id); };
}

}  // namespace chokepoint::cli
