// run_doctor as a library against the fake NVML (tests/fake_nvml) and fixture hosts:
// facts flow from the dlopen'ed library through the machine rules with their validity bits.
#include <cstdlib>

#include <gtest/gtest.h>

#include "pipeline/doctor_pipeline.h"
#include "rules/machine_evidence.h"

namespace chokepoint::pipeline {
namespace {

using report::DoctorReport;
using rules::Assessment;
using rules::exit_code_for;
using rules::verdict_of;

#ifdef CHOKEPOINT_FAKE_NVML_DIR
DoctorReport run(const std::string& lib, const std::string& scenario, const std::string& host) {
  setenv("FAKE_NVML_CONFIG", (std::string(CHOKEPOINT_FAKE_NVML_SCENARIOS) + "/" + scenario).c_str(), 1);
  DoctorOptions o;
  o.nvml.library = std::string(CHOKEPOINT_FAKE_NVML_DIR) + "/lib" + lib + ".so";
  o.host = machine::fixture_host_inputs(std::string(CHOKEPOINT_TEST_DATA) + "/host/" + host);
  return run_doctor(o);
}

const Assessment* find(const DoctorReport& r, const std::string& id, int gpu) {
  for (const auto& c : r.checks) {
    if (c.id == id && c.gpu == gpu) return &c;
  }
  return nullptr;
}

TEST(DoctorWithFakeNvml, FactsKeepValidity) {
  const DoctorReport r = run("fake_nvml", "h200_idle.txt", "dev_vm");
  ASSERT_TRUE(r.nvml.available) << r.nvml.error;
  ASSERT_EQ(r.nvml.gpus.size(), 1u);
  const doctor::GpuFacts& g = r.nvml.gpus[0];
  EXPECT_FALSE(g.retired_dbe.valid);
  EXPECT_EQ(g.retired_dbe.error, 3);
  EXPECT_EQ(r.nvml.error_text.at(3), "Not Supported") << "quoted from the library's nvmlErrorString";
  EXPECT_EQ(g.sysfs.numa_node, -1) << "sysfs node of 0000:00:04.0 from the fixture";
  EXPECT_EQ(exit_code_for(r.checks), 0);
  EXPECT_LT(r.elapsed_ms, 2000);
}

TEST(DoctorWithFakeNvml, TroubledGpuAndHost) {
  const DoctorReport r = run("fake_nvml", "h200_troubled.txt", "troubled");
  ASSERT_TRUE(r.nvml.available);
  const Assessment* numa = find(r, "numa-mismatch", 0);
  ASSERT_NE(numa, nullptr);
  EXPECT_EQ(verdict_of(*numa), "warning");
  EXPECT_NE(numa->observed.find("GPU on node 1 (CPUs 16-31); this process may use CPUs 0-15"), std::string::npos)
      << numa->observed;
  const Assessment* link = find(r, "pcie-link-degraded", 0);
  ASSERT_NE(link, nullptr);
  EXPECT_NE(link->advice.find("x8 of x16"), std::string::npos);
  EXPECT_NE(link->advice.find("limits the link to Gen4"), std::string::npos);
  EXPECT_EQ(link->advice.find("idle"), std::string::npos) << "runs at the slot's best: no downshift to explain";
  const Assessment* access = find(r, "gpu-access", 1);
  ASSERT_NE(access, nullptr);
  EXPECT_EQ(verdict_of(*access), "critical");
  EXPECT_EQ(exit_code_for(r.checks), 1);
}
#endif

}  // namespace
}  // namespace chokepoint::pipeline
