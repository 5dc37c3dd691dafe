#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "sampler/nvml/nvml.h"
#include "serve/exposition.h"
#include "serve/node_sampler.h"
#include "serve/server.h"

#ifndef CHOKEPOINT_FAKE_NVML_DIR
#define CHOKEPOINT_FAKE_NVML_DIR ""
#define CHOKEPOINT_FAKE_NVML_SCENARIOS ""
#endif

namespace chokepoint::serve {
namespace {

using samples::MetricId;

// The sample lines of `family` (name followed by '{' or ' ').
std::vector<std::string> lines_of(const std::string& page, const std::string& family) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < page.size()) {
    const size_t end = page.find('\n', start);
    const std::string line = page.substr(start, end - start);
    start = end == std::string::npos ? page.size() : end + 1;
    if (line.rfind(family, 0) == 0 && line.size() > family.size() &&
        (line[family.size()] == '{' || line[family.size()] == ' ')) {
      out.push_back(line);
    }
  }
  return out;
}

NodeSnapshot gpu_node() {
  NodeSnapshot n;
  n.hostname = "node-7";
  n.version = "0.1.0";
  GpuSnapshot g;
  g.meta.index = 0;
  g.meta.name = "NVIDIA H200";
  g.meta.uuid = "GPU-1";
  g.meta.bus_id = "00000000:00:06.0";
  g.values[MetricId::kGpuSmActive] = 96.6;
  g.values[MetricId::kGpuUtilization] = 100;
  g.values[MetricId::kGpuMemoryUsedBytes] = 1024.0 * 1024 * 1024;
  g.values[MetricId::kGpuMemoryTotalBytes] = 4.0 * 1024 * 1024 * 1024;
  n.gpus.push_back(g);
  JobSnapshot j;
  j.pid = 4242;
  j.name = "train.py";
  j.command = "python train.py --tag \"a\"\nb\\";
  j.gpus = {0};
  j.diagnosed = true;
  j.bound = "input";
  j.confidence = 0.8;
  j.findings.push_back({"input-pipeline-stall", "input", "critical", 1.6, "dataloader-workers"});
  j.findings.push_back({"host-swapping", "io", "warning", std::nullopt, ""});
  ProcessSnapshot p;
  p.pid = 4242;
  p.comm = "x\"}\n\xff";
  p.values[MetricId::kProcCpuPct] = 150;
  j.processes.push_back(p);
  n.jobs.push_back(j);
  return n;
}

TEST(ServeExposition, GpuSeriesUnderDcgmNamesAndUnits) {
  const std::string page = render_exposition(gpu_node(), {3, 1});
  const auto sm = lines_of(page, "DCGM_FI_PROF_SM_ACTIVE");
  ASSERT_EQ(sm.size(), 1u);
  EXPECT_EQ(sm[0],
            "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\",UUID=\"GPU-1\",pci_bus_id=\"00000000:00:06.0\",device=\"nvidia0\","
            "modelName=\"NVIDIA H200\",Hostname=\"node-7\"} 0.966");
  EXPECT_EQ(lines_of(page, "DCGM_FI_DEV_GPU_UTIL")[0].substr(lines_of(page, "DCGM_FI_DEV_GPU_UTIL")[0].rfind(' ')),
            " 100");  // dcgm-exporter keeps this one in %
  const std::string fb_free = lines_of(page, "DCGM_FI_DEV_FB_FREE")[0];
  EXPECT_EQ(fb_free.substr(fb_free.rfind(' ')), " 3072");  // MiB
  EXPECT_EQ(lines_of(page, "chokepoint_gpu_available")[0], "chokepoint_gpu_available{Hostname=\"node-7\"} 1");
  EXPECT_TRUE(lines_of(page, "chokepoint_gpu_unavailable_info").empty());
  EXPECT_EQ(lines_of(page, "chokepoint_serve_scrapes_total")[0],
            "chokepoint_serve_scrapes_total{Hostname=\"node-7\"} 3");
}

TEST(ServeExposition, JobVerdictAndFindings) {
  const std::string page = render_exposition(gpu_node(), {});
  const auto bound = lines_of(page, "chokepoint_job_bound");
  ASSERT_EQ(bound.size(), bound_categories().size());
  int ones = 0;
  for (const std::string& l : bound) {
    if (l.substr(l.rfind(' ')) == " 1") {
      ++ones;
      EXPECT_NE(l.find("category=\"input\""), std::string::npos) << l;
    }
  }
  EXPECT_EQ(ones, 1);
  const auto findings = lines_of(page, "chokepoint_job_finding_active");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_NE(findings[0].find("finding=\"input-pipeline-stall\",category=\"input\",severity=\"critical\"} 1"),
            std::string::npos);
  const auto speedup = lines_of(page, "chokepoint_job_finding_estimated_speedup_ratio");
  ASSERT_EQ(speedup.size(), 1u);  // host-swapping carries no estimate
  EXPECT_EQ(speedup[0].substr(speedup[0].rfind(' ')), " 1.6");
  // Whose estimate it is (issue 44: a finding's estimate is its own remedy's, named).
  EXPECT_NE(speedup[0].find("finding=\"input-pipeline-stall\",remedy=\"dataloader-workers\"}"), std::string::npos)
      << speedup[0];
  EXPECT_EQ(lines_of(page, "chokepoint_findings_active").size(), 2u);
  const auto cpu = lines_of(page, "chokepoint_process_cpu_cores");
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].substr(cpu[0].rfind(' ')), " 1.5");
  // Hostile comm and command stay inside their quotes: one line per sample.
  EXPECT_NE(cpu[0].find("comm=\"x\\\"}\\\\x0a\\\\xff\""), std::string::npos) << cpu[0];
  EXPECT_EQ(lines_of(page, "chokepoint_job_info").size(), 1u);
}

TEST(ServeExposition, NoGpuSaysWhyAndKeepsTheFamilies) {
  NodeSnapshot n;
  n.hostname = "cpu-node";
  n.gpu_unavailable = "NVIDIA driver library not found";
  const std::string page = render_exposition(n, {});
  EXPECT_EQ(lines_of(page, "chokepoint_gpu_available")[0], "chokepoint_gpu_available{Hostname=\"cpu-node\"} 0");
  EXPECT_EQ(lines_of(page, "chokepoint_gpu_unavailable_info")[0],
            "chokepoint_gpu_unavailable_info{Hostname=\"cpu-node\",reason=\"NVIDIA driver library not found\"} 1");
  EXPECT_TRUE(lines_of(page, "DCGM_FI_PROF_SM_ACTIVE").empty());
  for (std::string_view f : exposition_family_names()) {
    EXPECT_NE(page.find("# TYPE " + std::string(f) + " "), std::string::npos) << f;
  }
}

TEST(ServeJobName, ScriptModuleOrProgram) {
  EXPECT_EQ(job_name({"/usr/bin/python3", "-u", "/srv/train.py", "--lr", "1"}, "python3"), "train.py");
  EXPECT_EQ(job_name({"python", "-m", "torch.distributed.run", "x.py"}, "python"), "torch.distributed.run");
  EXPECT_EQ(job_name({"/opt/bin/llama-server", "-m", "x"}, "llama-server"), "llama-server");
  EXPECT_EQ(job_name({}, "kworker"), "kworker");
}

TEST(ServeListen, Addresses) {
  auto a = parse_listen("127.0.0.1:9400");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value().host, "127.0.0.1");
  EXPECT_EQ(a.value().port, 9400);
  a = parse_listen("[::1]:0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value().host, "::1");
  EXPECT_EQ(a.value().port, 0);
  a = parse_listen(":9400");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value().host, "0.0.0.0");
  EXPECT_FALSE(parse_listen("9400").ok());
  EXPECT_FALSE(parse_listen("localhost:99999").ok());
  EXPECT_FALSE(parse_listen("::1:9400").ok());
  EXPECT_FALSE(parse_listen("host:").ok());
}

// A real process followed by --pid on this machine, without NVML: host readings, the job,
// its process and a diagnosis over the window.
TEST(ServeNode, FollowsANamedProcessWithoutGpu) {
  const pid_t child = fork();
  if (child == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  // The child is `sleep` only once it has exec'd (under load that can take a while; a
  // first tick before it would see the test program's name).
  for (int i = 0; i < 200; ++i) {
    std::ifstream comm("/proc/" + std::to_string(child) + "/comm");
    std::string name;
    if (std::getline(comm, name) && name == "sleep") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  NodeOptions o;
  o.gpu = false;
  o.pids = {child};
  o.interval_ns = 100'000'000;
  o.window_ns = 1'000'000'000;
  o.diagnose_interval_ns = 100'000'000;
  auto node = NodeSampler::start(o);
  for (int i = 0; i < 15; ++i) {
    node->tick(samples::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const NodeSnapshot s = node->snapshot();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_EQ(s.gpu_unavailable, "GPU sampling turned off (--no-gpu)");
  EXPECT_EQ(s.ticks, 15u);
  EXPECT_TRUE(s.host.count(MetricId::kHostCpuIdlePct));
  ASSERT_EQ(s.jobs.size(), 1u);
  const JobSnapshot& j = s.jobs[0];
  EXPECT_EQ(j.pid, child);
  EXPECT_EQ(j.name, "sleep");
  EXPECT_EQ(j.command, "sleep 30");
  ASSERT_EQ(j.processes.size(), 1u);
  EXPECT_EQ(j.processes[0].comm, "sleep");
  EXPECT_GT(j.processes[0].values.at(MetricId::kProcRssBytes), 0);
  EXPECT_TRUE(j.diagnosed);
  // The window is bounded: 1 s of ticks, not the 1.5 s sampled.
  EXPECT_LE(j.window_s, 1.05);
  EXPECT_GT(s.diagnoses, 5u);
  // Once the job exits, it leaves.
  node->tick(samples::now());
  EXPECT_TRUE(node->snapshot().jobs.empty());
}

TEST(ServeNode, GpusThroughTheFakeNvml) {
  if (std::string(CHOKEPOINT_FAKE_NVML_DIR).empty()) GTEST_SKIP() << "fake NVML not built";
  setenv(nvml::kLibraryEnvVar, (std::string(CHOKEPOINT_FAKE_NVML_DIR) + "/libfake_nvml.so").c_str(), 1);
  setenv("FAKE_NVML_CONFIG", (std::string(CHOKEPOINT_FAKE_NVML_SCENARIOS) + "/h200_busy_2gpu.txt").c_str(), 1);
  NodeOptions o;
  o.interval_ns = 100'000'000;
  auto node = NodeSampler::start(o);
  for (int i = 0; i < 3; ++i) {
    node->tick(samples::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(110));
  }
  const NodeSnapshot s = node->snapshot();
  unsetenv(nvml::kLibraryEnvVar);
  unsetenv("FAKE_NVML_CONFIG");
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.driver_version, "580.159.04");
  EXPECT_DOUBLE_EQ(s.gpus[0].values.at(MetricId::kGpuSmActive), 96.6);
  EXPECT_EQ(s.gpus[1].values.count(MetricId::kGpuSmActive), 0u);  // GPU 1 has no GPM: absent, not 0
  EXPECT_EQ(s.gpus[0].values.at(MetricId::kGpuPowerW), 689);
  // PIDs 4242 and 777 of the scenario are not processes of this machine: no job.
  EXPECT_TRUE(s.jobs.empty() || std::none_of(s.jobs.begin(), s.jobs.end(),
                                             [](const JobSnapshot& j) { return j.pid == 4242 || j.pid == 777; }));
}

}  // namespace
}  // namespace chokepoint::serve
