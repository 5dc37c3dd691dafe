// Host facts from fixtures: dev_vm was captured from a real machine with
// tests/data/host/capture.sh; tuned and troubled are hand-made variants.
#include "doctor/host_facts.h"

#include <gtest/gtest.h>

namespace chokepoint::doctor {
namespace {

std::string fixture(const std::string& name) { return std::string(CHOKEPOINT_TEST_DATA) + "/host/" + name; }

TEST(HostFacts, CapturedVm) {
  const HostFacts f = collect_host_facts(machine::fixture_host_inputs(fixture("dev_vm")));
  ASSERT_TRUE(f.meminfo);
  EXPECT_GT(f.meminfo->mem_total_bytes, 0u);
  EXPECT_EQ(f.meminfo->swap_total_bytes, 0u);
  ASSERT_TRUE(f.swap_activity);
  EXPECT_EQ(f.swap_activity->pswpin, 0u);
  EXPECT_EQ(f.thp_enabled, "madvise");
  EXPECT_EQ(f.thp_defrag, "madvise");
  EXPECT_TRUE(f.governors.empty()) << "this VM has no cpufreq";
  EXPECT_EQ(f.numa_nodes_online, (std::vector<unsigned>{0}));
  EXPECT_EQ(f.allowed_cpus, (std::vector<unsigned>{0, 1}));
  ASSERT_TRUE(f.memlock);
  EXPECT_FALSE(f.memlock->soft_unlimited);
  EXPECT_EQ(f.memlock->soft_bytes, 8u << 20);
  ASSERT_TRUE(f.dev_shm);
  EXPECT_GT(f.dev_shm->total_bytes, 1ull << 30);
  EXPECT_FALSE(f.torch);
  const PciNuma numa = read_pci_numa(machine::fixture_host_inputs(fixture("dev_vm")), "0000:00:04.0");
  EXPECT_EQ(numa.numa_node, -1);
  EXPECT_EQ(numa.local_cpus, (std::vector<unsigned>{0, 1}));
}

TEST(HostFacts, TroubledHost) {
  const HostFacts f = collect_host_facts(machine::fixture_host_inputs(fixture("troubled")));
  ASSERT_TRUE(f.meminfo);
  EXPECT_EQ(*f.meminfo->swap_total_bytes - *f.meminfo->swap_free_bytes, 2097152ull << 10);
  EXPECT_EQ(f.swap_activity->pswpout, 524288u);
  EXPECT_EQ(f.thp_enabled, "always");
  EXPECT_EQ(f.thp_defrag, "always");
  EXPECT_EQ(f.governors.at("powersave"), 24u);
  EXPECT_EQ(f.governors.at("performance"), 8u);
  EXPECT_EQ(f.cpus_listed, 32u);
  EXPECT_EQ(f.memlock->soft_bytes, 65536u);
  EXPECT_EQ(f.dev_shm->total_bytes, 64u << 20);
  ASSERT_TRUE(f.torch);
  EXPECT_EQ(f.torch->version, "3.0.0+cu140");
  EXPECT_EQ(f.torch->cuda, "14.0");
  EXPECT_NE(f.torch->path.find("/opt/conda/lib/python3.11/site-packages/torch"), std::string::npos);
  const PciNuma numa = read_pci_numa(machine::fixture_host_inputs(fixture("troubled")), "0000:3b:00.0");
  EXPECT_EQ(numa.numa_node, 1);
}

TEST(HostFacts, MissingEverything) {
  const HostFacts f = collect_host_facts(machine::fixture_host_inputs(fixture("does-not-exist")));
  EXPECT_FALSE(f.meminfo);
  EXPECT_FALSE(f.swap_activity);
  EXPECT_FALSE(f.thp_enabled);
  EXPECT_TRUE(f.governors.empty());
  EXPECT_FALSE(f.allowed_cpus);
  EXPECT_FALSE(f.memlock);
  EXPECT_FALSE(f.dev_shm);
  EXPECT_FALSE(f.torch);
}

TEST(HostFacts, LiveInputsWork) {
  // The syscall hooks on this machine: whatever it is, they must answer.
  const HostFacts f = collect_host_facts(machine::live_host_inputs());
  ASSERT_TRUE(f.allowed_cpus);
  EXPECT_FALSE(f.allowed_cpus->empty());
  EXPECT_TRUE(f.memlock);
  EXPECT_TRUE(f.meminfo);
}

TEST(HostFacts, Parsers) {
  EXPECT_EQ(parse_sysfs_choice("always [madvise] never\n"), "madvise");
  EXPECT_FALSE(parse_sysfs_choice("madvise"));
  auto t = parse_torch_version_py("__version__ = '2.5.1'\ncuda: Optional[str] = None\n", "/x/torch");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version, "2.5.1");
  EXPECT_FALSE(t->cuda) << "CPU-only build";
  auto m = machine::parse_limits_memlock("Max locked memory         unlimited            unlimited            bytes\n");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->soft_unlimited);
  EXPECT_EQ(machine::parse_status_cpus_allowed("Name:\tx\nCpus_allowed_list:\t2-3,6\n"),
            (std::vector<unsigned>{2, 3, 6}));
}

}  // namespace
}  // namespace chokepoint::doctor

namespace chokepoint::doctor {
namespace {

// Captured on the H200 machine (tests/data/host/README.md), where PyTorch lives in the
// image's /opt/torch/.venv and is found through the python3 first on PATH.
TEST(HostFacts, H200VmFindsTorchThroughPath) {
  machine::HostInputs in = machine::fixture_host_inputs(std::string(CHOKEPOINT_TEST_DATA) + "/host/h200_vm");
  in.env["PATH"] = "/usr/local/sbin:/opt/torch/.venv/bin:/usr/bin:/bin";
  const HostFacts f = collect_host_facts(in);
  ASSERT_TRUE(f.torch);
  EXPECT_EQ(f.torch->version, "2.11.0+cu130");
  EXPECT_EQ(f.torch->cuda, "13.0");
  ASSERT_TRUE(f.meminfo);
  EXPECT_GT(f.meminfo->mem_total_bytes, 100ull << 30);  // 128 GiB machine
  EXPECT_EQ(f.thp_enabled, "madvise");
  const PciNuma numa = read_pci_numa(in, "0000:00:06.0");
  ASSERT_TRUE(numa.local_cpus);
  EXPECT_EQ(numa.local_cpus->size(), 16u);
}

}  // namespace
}  // namespace chokepoint::doctor
