// Machine facts through the one engine: doctor's ids are registered rules, and what they
// find becomes findings of `diagnose` like any other evidence.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "rules/diagnose.h"

namespace chokepoint::rules {
namespace {

doctor::HostFacts troubled_host() {
  return doctor::collect_host_facts(machine::fixture_host_inputs(std::string(CHOKEPOINT_TEST_DATA) + "/host/troubled"));
}

TEST(MachineRules, EveryAssessmentIsARegisteredRule) {
  const doctor::HostFacts h = troubled_host();
  const doctor::NvmlFacts no_driver;
  std::set<std::string> ids;
  for (const Assessment& a : assess_machine(MachineEvidence{h, no_driver})) {
    const Rule* r = find_rule(a.id);
    ASSERT_NE(r, nullptr) << a.id;
    EXPECT_NE(r->machine, nullptr) << a.id;
    ids.insert(a.id);
  }
  // Without a driver: the driver's one line and the host's five.
  EXPECT_EQ(ids, (std::set<std::string>{"nvidia-driver", "cpu-governor", "host-swapping", "transparent-hugepages",
                                        "memlock", "dev-shm"}));
}

TEST(MachineRules, FindingsJoinTheDiagnosis) {
  const doctor::HostFacts h = troubled_host();
  const doctor::NvmlFacts no_driver;
  const MachineEvidence m{h, no_driver};
  EvidenceSet ev;
  ev.machine = &m;
  const Diagnosis d = diagnose(ev);
  const auto swap = std::find_if(d.findings.begin(), d.findings.end(),
                                 [](const Finding& f) { return f.id == "host-swapping"; });
  ASSERT_NE(swap, d.findings.end());
  EXPECT_EQ(swap->sources, std::vector<std::string>{"machine"});
  EXPECT_EQ(swap->severity, Severity::kWarning);
  EXPECT_EQ(swap->category, Category::kIo) << "the rule's category, as when samples find it";
  EXPECT_FALSE(swap->recommendation.empty());
  // A skipped check (no driver) is not a finding.
  EXPECT_TRUE(
      std::none_of(d.findings.begin(), d.findings.end(), [](const Finding& f) { return f.id == "nvidia-driver"; }));
}

}  // namespace
}  // namespace chokepoint::rules
