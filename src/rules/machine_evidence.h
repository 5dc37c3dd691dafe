// Static facts of the machine (what `doctor` collects: the driver, each GPU over NVML,
// the host's /proc and /sys) as evidence for rules, and what a rule says about each
// subject it looked at: doctor lists every assessment, `run` and `analyze` the findings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/severity.h"
#include "doctor/gpu_facts.h"
#include "doctor/host_facts.h"

namespace chokepoint::rules {

struct MachineEvidence {
  const doctor::HostFacts& host;
  const doctor::NvmlFacts& nvml;
};

struct Assessment {
  enum class Outcome { kPass, kFinding, kSkipped };
  // What it concerns, in doctor's display order: the driver, one GPU, the host.
  enum class Scope { kSystem, kGpu, kHost };
  std::string id;     // the rule's id
  std::string title;  // "PCIe link"
  int gpu = -1;       // NVML index of the GPU it concerns (scope kGpu), else -1
  Outcome outcome = Outcome::kSkipped;
  Severity severity = Severity::kInfo;  // of a finding
  std::string observed;                 // what this machine shows, or why it could not be judged
  std::string expected;                 // what a healthy setup shows
  std::string advice;                   // why it matters and what to do; may be empty when all is well
  Scope scope = Scope::kSystem;
};

// "ok", "skip", or the severity of a finding ("warning", "critical"): doctor's column.
std::string_view verdict_of(const Assessment& a);
// Exit status of `chokepoint doctor`: 1 when any assessment is a critical finding, else 0
// (warnings and skipped checks never fail it: a machine without a GPU is not an error).
int exit_code_for(const std::vector<Assessment>& all);

}  // namespace chokepoint::rules
