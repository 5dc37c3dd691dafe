// Static facts of the machine (what `doctor` collects: the driver, each GPU over NVML,
// the host's /proc and /sys) as evidence for rules, and what a rule says about each
// subject it looked at: doctor lists every assessment, `run` and `analyze` the findings.
#pragma once

#include <string>

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
  std::string id;         // the rule's id
  std::string title;      // "PCIe link"
  int gpu = -1;           // NVML index of the GPU it concerns; -1 for the driver or the host
  Outcome outcome = Outcome::kSkipped;
  Severity severity = Severity::kInfo;  // of a finding
  std::string observed;   // what this machine shows, or why it could not be judged
  std::string expected;   // what a healthy setup shows
  std::string advice;     // why it matters and what to do; may be empty when all is well
};

}  // namespace chokepoint::rules
