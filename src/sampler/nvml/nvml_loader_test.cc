// The NVML loader against the fake libraries of tests/fake_nvml: the real dlopen and
// dlsym path, newest-symbol selection, fallbacks of an old driver, validity bits and
// NVML's own error strings.
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sampler/nvml/nvml.h"
#include "samples/clock_reasons.h"

#ifndef CHOKEPOINT_FAKE_NVML_DIR
#define CHOKEPOINT_FAKE_NVML_DIR ""
#define CHOKEPOINT_FAKE_NVML_SCENARIOS ""
#endif

namespace chokepoint::nvml {
namespace {

std::string fake_lib(const std::string& name) { return std::string(CHOKEPOINT_FAKE_NVML_DIR) + "/lib" + name + ".so"; }
std::string scenario(const std::string& name) { return std::string(CHOKEPOINT_FAKE_NVML_SCENARIOS) + "/" + name; }

class NvmlLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(CHOKEPOINT_FAKE_NVML_DIR).empty()) GTEST_SKIP() << "fake NVML not built";
    unsetenv(kLibraryEnvVar);
  }
  void TearDown() override { unsetenv("FAKE_NVML_CONFIG"); }

  std::unique_ptr<Nvml> open_fake(const std::string& lib, const std::string& config_path) {
    setenv("FAKE_NVML_CONFIG", config_path.c_str(), 1);
    auto r = Nvml::open(OpenOptions{fake_lib(lib)});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  // A scenario written for one test: the h200 idle scenario plus extra lines (later wins).
  std::string custom_scenario(const std::string& extra) {
    const std::string path = ::testing::TempDir() + "/nvml_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
    std::ifstream base(scenario("h200_idle.txt"));
    std::ofstream out(path);
    out << base.rdbuf() << "\n" << extra << "\n";
    return path;
  }
};

std::string bound(const Nvml& n, const std::string& slot) {
  for (const auto& s : n.symbols()) {
    if (s.slot == slot) return s.resolved;
  }
  return "<no slot>";
}

TEST_F(NvmlLoaderTest, BindsTheNewestSymbols) {
  auto n = open_fake("fake_nvml", scenario("h200_idle.txt"));
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(bound(*n, "init"), "nvmlInit_v2");
  EXPECT_EQ(bound(*n, "device_get_count"), "nvmlDeviceGetCount_v2");
  EXPECT_EQ(bound(*n, "device_get_handle_by_index"), "nvmlDeviceGetHandleByIndex_v2");
  EXPECT_EQ(bound(*n, "device_get_pci_info"), "nvmlDeviceGetPciInfo_v3");
  EXPECT_EQ(bound(*n, "device_get_compute_running_processes_v2"), "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(bound(*n, "device_get_current_clocks_event_reasons"), "nvmlDeviceGetCurrentClocksEventReasons");
  EXPECT_EQ(bound(*n, "system_get_cuda_driver_version"), "nvmlSystemGetCudaDriverVersion_v2");
  EXPECT_EQ(bound(*n, "gpm_metrics_get"), "nvmlGpmMetricsGet");
  EXPECT_NE(n->library_loaded().find("libfake_nvml.so"), std::string::npos);
  EXPECT_EQ(n->driver_version().value_or(""), "580.159.04");
  EXPECT_EQ(n->nvml_version().value_or(""), "13.580.159.04");
  EXPECT_EQ(n->cuda_driver_version().value_or(0), 13000);
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12080), "12.8");
  EXPECT_EQ(n->device_count().value_or(0), 1u);
}

TEST_F(NvmlLoaderTest, ReadsEveryDeviceValue) {
  auto n = open_fake("fake_nvml", scenario("h200_idle.txt"));
  ASSERT_NE(n, nullptr);
  auto d = n->device(0);
  ASSERT_TRUE(d.valid);
  EXPECT_EQ(d->name().value_or(""), "NVIDIA H200");
  EXPECT_EQ(d->uuid().value_or(""), "GPU-6f1c2a3e-0000-4000-8000-000000000001");
  auto pci = d->pci_info();
  ASSERT_TRUE(pci.valid);
  EXPECT_EQ(pci->bus_id, "00000000:00:04.0");
  EXPECT_EQ(pci->sysfs_bus_id(), "0000:00:04.0");
  EXPECT_EQ(pci->pci_device_id, 0x233510DEu);
  auto cc = d->cuda_compute_capability();
  ASSERT_TRUE(cc.valid);
  EXPECT_EQ(cc->major, 9);
  auto mem = d->memory_info();
  ASSERT_TRUE(mem.valid);
  EXPECT_EQ(mem->total, 143771ull << 20);
  ASSERT_TRUE(mem->reserved.has_value()) << "v2 memory info carries the reservation";
  EXPECT_EQ(*mem->reserved, 540ull << 20);
  EXPECT_EQ(mem->used, 0u);
  EXPECT_EQ(mem->free, (143771ull - 540) << 20);
  auto mem1 = d->memory_info_v1();
  ASSERT_TRUE(mem1.valid);
  EXPECT_EQ(mem1->used, 540ull << 20) << "v1 counts the reservation as used";
  EXPECT_EQ(d->pcie_link_generation().value_or(0), 5u);
  EXPECT_EQ(d->max_pcie_link_generation().value_or(0), 5u);
  EXPECT_EQ(d->gpu_max_pcie_link_generation().value_or(0), 5u);
  EXPECT_EQ(d->pcie_link_width().value_or(0), 16u);
  EXPECT_EQ(d->max_pcie_link_width().value_or(0), 16u);
  EXPECT_EQ(d->pcie_throughput_kbps(PcieDirection::kTx).value_or(0), 1024u);
  EXPECT_EQ(d->pcie_throughput_kbps(PcieDirection::kRx).value_or(0), 2048u);
  EXPECT_EQ(d->clock_mhz(Clock::kSm).value_or(0), 345u);
  EXPECT_EQ(d->max_clock_mhz(Clock::kSm).value_or(0), 1980u);
  EXPECT_EQ(d->clock_mhz(Clock::kMem).value_or(0), 3201u);
  EXPECT_EQ(d->clocks_event_reasons().value_or(0), samples::kReasonGpuIdle);
  EXPECT_EQ(d->performance_state().value_or(-1), 0);
  EXPECT_EQ(d->power_usage_mw().value_or(0), 76123u);
  EXPECT_EQ(d->enforced_power_limit_mw().value_or(0), 700000u);
  EXPECT_EQ(d->default_power_limit_mw().value_or(0), 700000u);
  EXPECT_EQ(d->temperature_c().value_or(0), 29);
  EXPECT_TRUE(d->persistence_mode().value_or(false));
  auto ecc = d->ecc_mode();
  ASSERT_TRUE(ecc.valid);
  EXPECT_TRUE(ecc->current);
  EXPECT_EQ(d->total_ecc_errors(EccError::kUncorrected, EccCounter::kVolatile).value_or(99), 0u);
  auto rows = d->remapped_rows();
  ASSERT_TRUE(rows.valid);
  EXPECT_FALSE(rows->pending);
  auto procs = d->compute_processes();
  ASSERT_TRUE(procs.valid) << "an empty process list is valid, not an error";
  EXPECT_TRUE(procs->empty());
  auto util = d->utilization();
  ASSERT_TRUE(util.valid);
  EXPECT_EQ(util->gpu_pct, 0u);
  auto cpus = d->cpu_affinity();
  ASSERT_TRUE(cpus.valid);
  EXPECT_EQ(*cpus, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(d->gpm_supported().value_or(false));
}

TEST_F(NvmlLoaderTest, NotSupportedIsInvalidNeverZero) {
  auto n = open_fake("fake_nvml", scenario("h200_idle.txt"));
  ASSERT_NE(n, nullptr);
  auto d = n->device(0);
  ASSERT_TRUE(d.valid);
  // Hopper has no page retirement; the scenario leaves these keys out.
  auto pages = d->retired_pages(RetirementCause::kDoubleBit);
  EXPECT_FALSE(pages.valid);
  EXPECT_EQ(pages.error, 3);
  EXPECT_EQ(pages.value, 0u);  // the payload is meaningless: only `valid` counts
  EXPECT_FALSE(d->numa_node_id().valid);
  EXPECT_EQ(n->error_string(3), "Not Supported") << "text comes from the library's nvmlErrorString";
  EXPECT_EQ(n->error_string(4), "Insufficient Permissions");
}

TEST_F(NvmlLoaderTest, ScriptedErrorCodesReachTheCaller) {
  auto n = open_fake("fake_nvml", custom_scenario("gpu0.temperature_c = !4\ngpu0.utilization = !15"));
  ASSERT_NE(n, nullptr);
  auto d = n->device(0);
  ASSERT_TRUE(d.valid);
  auto t = d->temperature_c();
  EXPECT_FALSE(t.valid);
  EXPECT_EQ(t.error, 4);
  EXPECT_EQ(d->utilization().error, 15);
  EXPECT_EQ(n->error_string(15), "GPU is lost");
}

TEST_F(NvmlLoaderTest, ProcessListGrowsPastTheFirstBuffer) {
  std::string list;
  for (int i = 0; i < 100; ++i) {
    if (i) list += ',';
    list += std::to_string(1000 + i) + ":" + std::to_string(i) + "MiB";
  }
  auto n = open_fake("fake_nvml", custom_scenario("gpu0.processes = " + list + ", 7:-"));
  ASSERT_NE(n, nullptr);
  auto procs = n->device(0)->compute_processes();
  ASSERT_TRUE(procs.valid);
  ASSERT_EQ(procs->size(), 101u);
  EXPECT_EQ((*procs)[5].pid, 1005u);
  EXPECT_EQ((*procs)[5].used_bytes.value_or(0), 5ull << 20);
  EXPECT_EQ((*procs)[100].pid, 7u);
  EXPECT_FALSE((*procs)[100].used_bytes.has_value()) << "NVML_VALUE_NOT_AVAILABLE is not a size";
}

TEST_F(NvmlLoaderTest, GpmSamplesAndMetrics) {
  auto n = open_fake("fake_nvml", scenario("h200_idle.txt"));
  ASSERT_NE(n, nullptr);
  auto d = n->device(0);
  ASSERT_TRUE(d.valid);
  GpmSample a, b;
  const unsigned ids[] = {gpm::kSmUtil, gpm::kDramBwUtil, gpm::kPcieRxPerSec, 99};
  EXPECT_FALSE(n->gpm_metrics(a, b, ids).valid) << "metrics need two taken samples";
  ASSERT_EQ(d->gpm_sample(a), 0);
  ASSERT_EQ(d->gpm_sample(b), 0);
  auto m = n->gpm_metrics(a, b, ids);
  ASSERT_TRUE(m.valid) << n->error_string(m.error);
  ASSERT_EQ(m->size(), 4u);
  EXPECT_DOUBLE_EQ((*m)[1].value.value_or(-1), 0.5);
  EXPECT_DOUBLE_EQ((*m)[2].value.value_or(-1), 3.25);
  EXPECT_EQ((*m)[2].unit, "MiB/s");
  EXPECT_EQ((*m)[1].name, "fake_metric_10");
  EXPECT_FALSE((*m)[3].value.valid) << "each metric carries its own status";
  EXPECT_EQ((*m)[3].value.error, 3);
  // More ids than the oldest driver accepts per call: split into several calls.
  std::vector<unsigned> many(150, gpm::kDramBwUtil);
  auto big = n->gpm_metrics(a, b, many);
  ASSERT_TRUE(big.valid) << n->error_string(big.error);
  ASSERT_EQ(big->size(), 150u);
  EXPECT_DOUBLE_EQ(big->back().value.value_or(-1), 0.5);
  // A moved-from sample is empty; the moved-to one still works.
  GpmSample c = std::move(b);
  EXPECT_FALSE(b.taken());  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  EXPECT_TRUE(c.taken());
}

TEST_F(NvmlLoaderTest, OldDriverFallsBackAndToleratesMissingSymbols) {
  auto n = open_fake("fake_nvml_legacy", scenario("h200_idle.txt"));
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(bound(*n, "init"), "nvmlInit");
  EXPECT_EQ(bound(*n, "device_get_pci_info"), "nvmlDeviceGetPciInfo_v2");
  EXPECT_EQ(bound(*n, "device_get_current_clocks_event_reasons"), "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_EQ(bound(*n, "gpm_query_device_support"), "");
  auto d = n->device(0);
  ASSERT_TRUE(d.valid);
  auto mem = d->memory_info();
  ASSERT_TRUE(mem.valid) << "falls back to nvmlDeviceGetMemoryInfo";
  EXPECT_FALSE(mem->reserved.has_value());
  EXPECT_EQ(mem->used, 540ull << 20);
  EXPECT_EQ(d->temperature_c().value_or(0), 29) << "falls back to nvmlDeviceGetTemperature";
  EXPECT_EQ(d->clocks_event_reasons().value_or(0), samples::kReasonGpuIdle);
  EXPECT_EQ(d->pci_info()->bus_id, "00000000:00:04.0");
  auto g = d->gpm_supported();
  EXPECT_FALSE(g.valid);
  EXPECT_EQ(g.error, kMissingSymbol);
  EXPECT_NE(n->error_string(kMissingSymbol).find("older driver"), std::string::npos);
  EXPECT_EQ(d->remapped_rows().error, kMissingSymbol);
  GpmSample s;
  EXPECT_EQ(d->gpm_sample(s), kMissingSymbol);
}

TEST_F(NvmlLoaderTest, OldDriverProcessListUsesTheV1Layout) {
  auto n = open_fake("fake_nvml_legacy", custom_scenario("gpu0.processes = 4242:3GiB, 77:-"));
  ASSERT_NE(n, nullptr);
  auto procs = n->device(0)->compute_processes();
  ASSERT_TRUE(procs.valid);
  ASSERT_EQ(procs->size(), 2u);
  EXPECT_EQ((*procs)[0].pid, 4242u);
  EXPECT_EQ((*procs)[0].used_bytes.value_or(0), 3ull << 30);
  EXPECT_EQ((*procs)[1].pid, 77u);
  EXPECT_FALSE((*procs)[1].used_bytes.has_value());
}

TEST_F(NvmlLoaderTest, HandleErrorsAreReported) {
  auto n = open_fake("fake_nvml", scenario("h200_troubled.txt"));
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->device_count().value_or(0), 2u);
  auto lost = n->device(1);
  EXPECT_FALSE(lost.valid);
  EXPECT_EQ(lost.error, 15);
  EXPECT_FALSE(n->device(7).valid);
}

TEST_F(NvmlLoaderTest, MissingLibraryFailsCleanly) {
  auto r = Nvml::open(OpenOptions{"/nonexistent/libnvidia-ml.so.1"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not found"), std::string::npos) << r.status().message();
}

TEST_F(NvmlLoaderTest, EnvironmentVariableChoosesTheLibraryAlone) {
  setenv(kLibraryEnvVar, "/nonexistent/libnvidia-ml.so.1", 1);
  auto missing = Nvml::open();
  EXPECT_FALSE(missing.ok()) << "must not fall back to the real driver";
  setenv("FAKE_NVML_CONFIG", scenario("h200_idle.txt").c_str(), 1);
  setenv(kLibraryEnvVar, fake_lib("fake_nvml").c_str(), 1);
  auto found = Nvml::open();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found.value()->driver_version().value_or(""), "580.159.04");
  unsetenv(kLibraryEnvVar);
}

TEST_F(NvmlLoaderTest, LibraryWithoutInitIsRejected) {
  auto r = Nvml::open(OpenOptions{fake_lib("fake_nvml_noinit")});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("lacks nvmlInit_v2"), std::string::npos) << r.status().message();
}

TEST_F(NvmlLoaderTest, InitFailureNamesTheCause) {
  setenv("FAKE_NVML_CONFIG", scenario("driver_not_loaded.txt").c_str(), 1);
  auto r = Nvml::open(OpenOptions{fake_lib("fake_nvml")});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Driver Not Loaded"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("kernel driver is not loaded"), std::string::npos);
}

TEST(ValueTest, InvalidKeepsItsCode) {
  auto v = Value<int>::fail(3);
  EXPECT_FALSE(v);
  EXPECT_EQ(v.value_or(7), 7);
  EXPECT_EQ(v.with(std::string("x")).error, 3);
  auto ok = Value<int>::ok(0);
  EXPECT_TRUE(ok) << "zero is a valid reading";
  EXPECT_EQ(ok.error, 0);
}

}  // namespace
}  // namespace chokepoint::nvml
