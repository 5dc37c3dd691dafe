// A doctor check is data: what was looked at, what was seen, what was expected and what
// to do about it. Checks are produced by pure functions of collected facts
// (host_checks.h, gpu_checks.h) and rendered elsewhere (doctor_render.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chokepoint::doctor {

enum class CheckStatus { kOk, kWarn, kFail, kSkip };

std::string_view status_name(CheckStatus s);  // "ok", "warn", "fail", "skip"

struct Check {
  std::string id;        // stable, kebab-case: "pcie-link"
  std::string title;     // "PCIe link"
  int gpu = -1;          // NVML index of the GPU it concerns; -1 for host/system checks
  CheckStatus status = CheckStatus::kSkip;
  std::string observed;  // what this machine shows, or why the check could not run
  std::string expected;  // what a healthy setup shows
  std::string advice;    // why it matters and what to do; may be empty when all is well
};

// Exit status of `chokepoint doctor`: 1 when any check failed, else 0 (warnings and
// skipped checks never fail the command: a machine without a GPU is not an error).
int exit_code_for(const std::vector<Check>& checks);

}  // namespace chokepoint::doctor
