#include "rules/checks/checks.h"

#include "rules/diagnose.h"

#include <gtest/gtest.h>

namespace chokepoint::rules::checks {
namespace {

using namespace doctor;

std::string fixture(const std::string& name) { return std::string(CHOKEPOINT_TEST_DATA) + "/host/" + name; }
HostFacts facts(const std::string& name) { return collect_host_facts(machine::fixture_host_inputs(fixture(name))); }

// The host's assessments, as the engine runs them.
std::vector<Assessment> host_checks(const HostFacts& f) {
  const NvmlFacts no_driver;
  std::vector<Assessment> out;
  for (auto& a : assess_machine(MachineEvidence{f, no_driver})) {
    if (a.scope == Assessment::Scope::kHost) out.push_back(a);
  }
  EXPECT_EQ(out.size(), 5u);
  return out;
}

TEST(HostChecks, CapturedVm) {
  const HostFacts f = facts("dev_vm");
  const Assessment gov = check_cpu_governor(f);
  EXPECT_EQ(verdict_of(gov), "skip");
  EXPECT_NE(gov.observed.find("no cpufreq"), std::string::npos);
  EXPECT_EQ(verdict_of(check_swap(f)), "ok");
  EXPECT_NE(check_swap(f).observed.find("no swap configured"), std::string::npos);
  EXPECT_EQ(verdict_of(check_transparent_hugepages(f)), "ok");
  const Assessment memlock = check_memlock(f);
  EXPECT_EQ(verdict_of(memlock), "warning") << "8 MiB: too small for RDMA";
  EXPECT_NE(memlock.observed.find("soft 8.0 MiB"), std::string::npos) << memlock.observed;
  EXPECT_EQ(verdict_of(check_dev_shm(f)), "ok");
}

TEST(HostChecks, TunedHostIsClean) {
  for (const Assessment& c : host_checks(facts("tuned"))) {
    EXPECT_EQ(verdict_of(c), "ok") << c.id << ": " << c.observed << " / " << c.advice;
  }
}

TEST(HostChecks, TroubledHostWarnsEverywhere) {
  const HostFacts f = facts("troubled");
  for (const Assessment& c : host_checks(f)) {
    EXPECT_EQ(verdict_of(c), "warning") << c.id << ": " << c.observed;
    EXPECT_FALSE(c.advice.empty()) << c.id;
    EXPECT_FALSE(c.expected.empty()) << c.id;
  }
  EXPECT_NE(check_cpu_governor(f).observed.find("powersave on 24 CPUs"), std::string::npos);
  EXPECT_NE(check_swap(f).observed.find("2.0 GiB of 8.0 GiB swap used"), std::string::npos) << check_swap(f).observed;
  EXPECT_NE(check_swap(f).advice.find("Less than 10% of RAM"), std::string::npos);
  EXPECT_NE(check_dev_shm(f).observed.find("64 MiB size"), std::string::npos) << check_dev_shm(f).observed;
}

TEST(HostChecks, ShmEdgeCases) {
  HostFacts f;
  EXPECT_EQ(verdict_of(check_dev_shm(f)), "skip");
  f.dev_shm = machine::FsSpace{8ull << 30, 100ull << 20};
  EXPECT_EQ(verdict_of(check_dev_shm(f)), "warning") << "nearly full";
  f.dev_shm = machine::FsSpace{2ull << 30, 2ull << 30};
  f.meminfo = sampler::proc::MemInfo{512ull << 30, std::nullopt, 0, 0};  // 512 GiB RAM
  const Assessment c = check_dev_shm(f);
  EXPECT_EQ(verdict_of(c), "ok");
  EXPECT_NE(c.advice.find("Under 10% of RAM"), std::string::npos);
}

TEST(HostChecks, SwapHistoryAloneWarns) {
  HostFacts f;
  f.meminfo = sampler::proc::MemInfo{16ull << 30, 8ull << 30, 0, 0};
  f.swap_activity = SwapActivity{0, 0};
  EXPECT_EQ(verdict_of(check_swap(f)), "ok");
  f.swap_activity = SwapActivity{10, 0};
  EXPECT_EQ(verdict_of(check_swap(f)), "warning");
}

TEST(HostChecks, ThpNeverIsANoteNotAWarning) {
  HostFacts f;
  f.thp_enabled = "never";
  const Assessment c = check_transparent_hugepages(f);
  EXPECT_EQ(verdict_of(c), "ok");
  EXPECT_NE(c.advice.find("THP_MEM_ALLOC_ENABLE"), std::string::npos);
  f.thp_enabled.reset();
  EXPECT_EQ(verdict_of(check_transparent_hugepages(f)), "skip");
}

TEST(HostChecks, MemlockLargeEnough) {
  HostFacts f;
  f.memlock = machine::MemlockLimit{false, 4ull << 30, false, 4ull << 30};
  EXPECT_EQ(verdict_of(check_memlock(f)), "ok");
}

}  // namespace
}  // namespace chokepoint::rules::checks
