// chokepoint doctor [--format text|json]: static checks of the driver, each GPU and the host.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "doctor/nvml_dump.h"
#include "pipeline/doctor_pipeline.h"
#include "report/doctor_render.h"

namespace chokepoint::cli {
namespace {

struct DoctorOptions {
  std::string format = "text";
  bool json = false;  // --json, the same as --format json
  std::string color = "auto";
  bool dump_nvml = false;  // hidden: raw NVML values + layout checks (scripts/gpu_check.sh doctor)
  std::string host_root;   // hidden: read host files under this directory (tests)
};

int run_doctor_command(const DoctorOptions& o) {
  if (o.dump_nvml) return doctor::dump_nvml({}, std::cout);
  pipeline::DoctorOptions d;
  if (!o.host_root.empty()) {
    d.host = machine::fixture_host_inputs(o.host_root);
    d.probe_tracer = false;  // a captured host: this machine's tracer says nothing of it
  }
  const report::DoctorReport report = pipeline::run_doctor(d);
  const report::Format format = o.json ? report::Format::kJson
                                       : report::parse_format(o.format, report::kDoctorFormats).value();
  report::RenderOptions t;
  t.color = want_color(o.color, false);
  t.width = text_width(t.width);
  std::cout << report::render_doctor(report, format, t) << std::flush;
  return rules::exit_code_for(report.checks);
}

}  // namespace

RunFn add_doctor_command(CLI::App& app) {
  auto opts = std::make_shared<DoctorOptions>();
  auto* cmd = app.add_subcommand(
      "doctor",
      "Check this machine for what slows GPU jobs before they run: driver and CUDA versions, PCIe "
      "link, persistence mode, clocks and throttling, ECC errors, memory held by other processes, "
      "NUMA placement, CPU governor, swap, huge pages, memlock and /dev/shm.");
  add_format_option(
      cmd, &opts->format, report::kDoctorFormats,
      "Report format: " + report::format_names(report::kDoctorFormats) + " (json: schema chokepoint.doctor/2)");
  cmd->add_flag("--json", opts->json, "The same as --format json");
  cmd->add_option("--color", opts->color, "Colour: auto (tty and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("--dump-nvml", opts->dump_nvml, "Print every NVML value read, raw, with layout checks")->group("");
  cmd->add_option("--host-root", opts->host_root, "Read /proc and /sys under DIR (tests)")->group("");
  cmd->footer(
      "Environment: CHOKEPOINT_NVML_LIB=PATH loads that NVML library instead of libnvidia-ml.so.1.\n"
      "Exit status: 0 nothing critical (warnings and a machine without a GPU are fine), 1 a critical "
      "finding, 2 usage error.");
  return [opts] { return run_doctor_command(*opts); };
}

}  // namespace chokepoint::cli
