// `chokepoint doctor` end to end, as a user runs it: the real binary, the real dlopen of
// a fake libnvidia-ml (CHOKEPOINT_NVML_LIB) replaying a scenario, and a captured or
// hand-made host under --host-root.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct DoctorRun {
  int exit_code = -1;
  std::string out;
  double seconds = 0;
};

std::string fake_lib(const std::string& name) { return std::string(CHOKEPOINT_FAKE_NVML_DIR) + "/lib" + name + ".so"; }
std::string scenario(const std::string& name) { return std::string(CHOKEPOINT_FAKE_NVML_SCENARIOS) + "/" + name; }
std::string host(const std::string& name) { return std::string(CHOKEPOINT_TEST_DATA) + "/host/" + name; }

// Runs the binary with the given NVML library and scenario; stdout only.
DoctorRun doctor(const std::string& lib, const std::string& scenario_file, const std::string& args) {
  setenv("CHOKEPOINT_NVML_LIB", lib.c_str(), 1);
  setenv("FAKE_NVML_CONFIG", scenario_file.c_str(), 1);
  setenv("NO_COLOR", "1", 1);
  const std::string cmd = std::string("'") + CHOKEPOINT_BINARY + "' doctor " + args + " 2>/dev/null";
  DoctorRun r;
  const auto start = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// "id" or "id@gpuN" -> status.
std::map<std::string, std::string> statuses(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  for (const auto& c : j.at("checks")) {
    std::string key = c.at("id").get<std::string>();
    if (!c.at("gpu").is_null()) key += "@gpu" + std::to_string(c.at("gpu").get<int>());
    out[key] = c.at("status").get<std::string>();
  }
  return out;
}

std::string observed(const nlohmann::json& j, const std::string& id, int gpu = -1) {
  for (const auto& c : j.at("checks")) {
    if (c.at("id") == id && (gpu < 0 ? c.at("gpu").is_null() : c.at("gpu") == gpu)) return c.at("observed");
  }
  return "<missing>";
}

TEST(DoctorCli, HealthyH200InAVm) {
  DoctorRun r = doctor(fake_lib("fake_nvml"), scenario("h200_idle.txt"), "--json --host-root '" + host("dev_vm") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "chokepoint.doctor/2");
  EXPECT_EQ(j.at("nvml").at("available"), true);
  EXPECT_EQ(j.at("nvml").at("driver_version"), "580.159.04");
  EXPECT_EQ(j.at("nvml").at("cuda_driver_version"), "13.0");
  EXPECT_EQ(j.at("gpus").at(0).at("pci_bus_id"), "00000000:00:04.0");
  const std::map<std::string, std::string> expected = {{"nvidia-driver", "ok"},
                                                       {"cuda-compat", "skip"},
                                                       {"pcie-link-degraded@gpu0", "ok"},
                                                       {"persistence-mode@gpu0", "ok"},
                                                       {"clock-throttled@gpu0", "ok"},
                                                       {"memory-errors@gpu0", "ok"},
                                                       {"gpu-shared@gpu0", "ok"},
                                                       {"numa-mismatch@gpu0", "ok"},
                                                       {"gpm-metrics@gpu0", "ok"},
                                                       {"cpu-governor", "skip"},
                                                       {"host-swapping", "ok"},
                                                       {"transparent-hugepages", "ok"},
                                                       {"memlock", "warning"},
                                                       {"dev-shm", "ok"},
                                                       {"trace-ready", "skip"}};
  EXPECT_EQ(statuses(j), expected);
  EXPECT_EQ(j.at("summary").at("critical"), 0);
  EXPECT_EQ(j.at("exit_code"), 0);
  EXPECT_NE(observed(j, "numa-mismatch", 0).find("one NUMA node"), std::string::npos);
  EXPECT_LT(r.seconds, 2.0);
}

TEST(DoctorCli, TroubledMachineFails) {
  DoctorRun r = doctor(fake_lib("fake_nvml"), scenario("h200_troubled.txt"),
                       "--json --host-root '" + host("troubled") + "'");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const std::map<std::string, std::string> expected = {{"nvidia-driver", "ok"},
                                                       {"cuda-compat", "warning"},
                                                       {"pcie-link-degraded@gpu0", "warning"},
                                                       {"persistence-mode@gpu0", "warning"},
                                                       {"clock-throttled@gpu0", "critical"},
                                                       {"memory-errors@gpu0", "critical"},
                                                       {"gpu-shared@gpu0", "warning"},
                                                       {"numa-mismatch@gpu0", "warning"},
                                                       {"gpm-metrics@gpu0", "skip"},
                                                       {"gpu-access@gpu1", "critical"},
                                                       {"cpu-governor", "warning"},
                                                       {"host-swapping", "warning"},
                                                       {"transparent-hugepages", "warning"},
                                                       {"memlock", "warning"},
                                                       {"dev-shm", "warning"},
                                                       {"trace-ready", "skip"}};
  EXPECT_EQ(statuses(j), expected);
  EXPECT_NE(observed(j, "gpu-shared", 0).find("pid 4242 python3"), std::string::npos);
  EXPECT_NE(observed(j, "gpu-shared", 0).find("pid 5151 (not visible here)"), std::string::npos);
  EXPECT_NE(observed(j, "clock-throttled", 0).find("hw_thermal_slowdown"), std::string::npos);
  EXPECT_NE(observed(j, "gpu-access", 1).find("GPU is lost"), std::string::npos);
  EXPECT_NE(observed(j, "numa-mismatch", 0).find("node 1"), std::string::npos);
}

TEST(DoctorCli, NoNvmlAtAllSaysSoOnceAndChecksTheHost) {
  DoctorRun r = doctor("/nonexistent/libnvidia-ml.so.1", scenario("h200_idle.txt"),
                       "--json --host-root '" + host("dev_vm") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("nvml").at("available"), false);
  EXPECT_TRUE(j.at("gpus").empty());
  const auto s = statuses(j);
  EXPECT_EQ(s.at("nvidia-driver"), "skip");
  EXPECT_EQ(s.count("cuda-compat"), 0u) << "the missing driver is reported once";
  for (const auto& [id, status] : s) EXPECT_EQ(id.find("@gpu"), std::string::npos) << id;
  EXPECT_EQ(s.at("host-swapping"), "ok");
  EXPECT_EQ(s.at("dev-shm"), "ok");

  DoctorRun text = doctor("/nonexistent/libnvidia-ml.so.1", scenario("h200_idle.txt"),
                          "--host-root '" + host("dev_vm") + "'");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.out.rfind("chokepoint doctor: no NVIDIA GPU or driver usable here", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("\nHost\n"), std::string::npos);
}

TEST(DoctorCli, DriverWithoutVisibleGpu) {
  DoctorRun r = doctor(fake_lib("fake_nvml"), scenario("no_gpu.txt"), "--json --host-root '" + host("dev_vm") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(statuses(j).at("nvidia-driver"), "skip");
  EXPECT_NE(observed(j, "nvidia-driver").find("no GPU is visible"), std::string::npos);
}

TEST(DoctorCli, KernelDriverNotLoaded) {
  DoctorRun r = doctor(fake_lib("fake_nvml"), scenario("driver_not_loaded.txt"),
                       "--json --host-root '" + host("dev_vm") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("nvml").at("available"), false);
  EXPECT_NE(observed(j, "nvidia-driver").find("Driver Not Loaded"), std::string::npos);
}

TEST(DoctorCli, OldDriverWithoutGpmOrRemappedRows) {
  DoctorRun r = doctor(fake_lib("fake_nvml_legacy"), scenario("h200_idle.txt"),
                       "--json --host-root '" + host("dev_vm") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto s = statuses(nlohmann::json::parse(r.out));
  EXPECT_EQ(s.at("gpm-metrics@gpu0"), "skip");
  EXPECT_EQ(s.at("memory-errors@gpu0"), "ok");
  EXPECT_EQ(s.at("clock-throttled@gpu0"), "ok");
}

TEST(DoctorCli, TextReportGroupsAndAdvises) {
  DoctorRun r = doctor(fake_lib("fake_nvml"), scenario("h200_troubled.txt"), "--host-root '" + host("troubled") + "'");
  ASSERT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("chokepoint doctor: 2 GPUs (NVIDIA H100 80GB HBM3), driver 535.104.05, CUDA 12.2"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nGPU 0  NVIDIA H100 80GB HBM3  00000000:3B:00.0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected: enabled"), std::string::npos);
  EXPECT_NE(r.out.find("nvidia-smi -pm 1"), std::string::npos);
  EXPECT_NE(r.out.find(" critical, "), std::string::npos);
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "NO_COLOR and a pipe mean no colour";
}

TEST(DoctorCli, DumpNvmlPassesItsLayoutChecksOnTheFake) {
  DoctorRun r = doctor(fake_lib("fake_nvml"), scenario("h200_idle.txt"), "--dump-nvml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("init: nvmlInit_v2"), std::string::npos);
  EXPECT_NE(r.out.find("plausibility checks failed: 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("retired_pages_dbe: <invalid: Not Supported (3)>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[PASS] pci bus_id text"), std::string::npos);
}

}  // namespace
