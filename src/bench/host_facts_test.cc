#include "bench/host_facts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace chokepoint::bench {
namespace {

namespace fs = std::filesystem;

class FakeRoot {
 public:
  FakeRoot() : root_(fs::temp_directory_path() / ("chokepoint_hostfacts_" + std::to_string(getpid()))) {
    fs::remove_all(root_);
  }
  ~FakeRoot() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string str() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(HostFacts, PcieGeneration) {
  EXPECT_EQ(machine::pcie_gen_from_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(machine::pcie_gen_from_speed("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(machine::pcie_gen_from_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(machine::pcie_gen_from_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(machine::pcie_gen_from_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(machine::pcie_gen_from_speed("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(machine::pcie_gen_from_speed("Unknown"), -1);
  EXPECT_EQ(machine::pcie_gen_from_speed(""), -1);
  EXPECT_EQ(machine::pcie_width_from_text("16"), 16);
  EXPECT_EQ(machine::pcie_width_from_text("x8"), 8);
  EXPECT_EQ(machine::pcie_width_from_text(""), -1);
}

TEST(HostFacts, FromAFakeSysfs) {
  FakeRoot r;
  r.write("proc/cpuinfo", "processor : 0\nflags : fpu vme hypervisor avx\n");
  r.write("proc/loadavg", "3.50 2.00 1.00 1/100 1234\n");
  r.write("sys/devices/system/cpu/online", "0-7\n");
  r.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
  r.write("sys/devices/system/node/node0/cpulist", "0-3\n");
  r.write("sys/devices/system/node/node1/cpulist", "4-7\n");
  r.write("sys/devices/system/node/node2/cpulist", "8-11\n");
  r.write("sys/class/iommu/dmar0/x", "");
  r.write("sys/bus/pci/devices/0000:3b:00.0/max_link_speed", "32.0 GT/s PCIe\n");
  r.write("sys/bus/pci/devices/0000:3b:00.0/max_link_width", "16\n");
  r.write("sys/bus/pci/devices/0000:3b:00.0/numa_node", "1\n");
  const machine::HostInfo h = collect_host_info(machine::fixture_host_inputs(r.str()));
  EXPECT_EQ(h.cpus, 8);
  EXPECT_DOUBLE_EQ(h.loadavg_1m, 3.5);
  EXPECT_TRUE(h.virtual_machine);
  EXPECT_EQ(h.cpu_governor, "powersave");
  EXPECT_TRUE(h.iommu);
  EXPECT_EQ(h.process_numa_nodes, (std::vector<int>{0, 1}));
  machine::GpuProfile g;
  g.pci_bus_id = "0000:3b:00.0";
  fill_gpu_host_facts(g, machine::fixture_host_inputs(r.str()));
  EXPECT_EQ(g.pcie_speed_max, "32.0 GT/s PCIe");
  EXPECT_EQ(g.pcie_width_max, "16");
  EXPECT_EQ(g.numa_node, 1);
}

TEST(HostFacts, MissingFilesLeaveUnknowns) {
  FakeRoot r;
  r.write("proc/cpuinfo", "flags : fpu\n");
  const machine::HostInfo h = collect_host_info(machine::fixture_host_inputs(r.str()));
  EXPECT_FALSE(h.virtual_machine);
  EXPECT_EQ(h.cpu_governor, "");
  EXPECT_FALSE(h.iommu);
  EXPECT_TRUE(h.process_numa_nodes.empty());
  machine::GpuProfile g;
  g.pci_bus_id = "0000:99:00.0";
  fill_gpu_host_facts(g, machine::fixture_host_inputs(r.str()));
  EXPECT_EQ(g.pcie_speed_max, "");
  EXPECT_EQ(g.numa_node, -1);
}

// The H200 VM doctor's tests read (tests/data/host/h200_vm): bench reads it through the
// same machine::HostInputs, so the CPUs this process may use come from its
// Cpus_allowed_list, as doctor's do, and the GPU's NUMA node from the same sysfs file.
TEST(HostFacts, SameReaderAsDoctorOnTheCapturedH200) {
  const auto in = machine::fixture_host_inputs(std::string(CHOKEPOINT_TEST_DATA) + "/host/h200_vm");
  const machine::HostInfo h = collect_host_info(in);
  EXPECT_EQ(h.cpus, 16);
  EXPECT_TRUE(h.hostname.empty());  // not this process's host
  EXPECT_TRUE(h.env.empty());
  machine::GpuProfile g;
  g.pci_bus_id = "0000:00:06.0";
  fill_gpu_host_facts(g, in);
  EXPECT_EQ(g.numa_node, -1);
}

TEST(HostFacts, ThisMachineDoesNotCrash) {
  const machine::HostInfo h = collect_host_info(machine::live_host_inputs());
  EXPECT_GT(h.cpus, 0);
}

}  // namespace
}  // namespace chokepoint::bench
