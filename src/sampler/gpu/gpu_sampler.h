// The GPU side of a sampling tick, over the NVML wrapper (sampler/nvml): classic
// readings every tick (utilization, memory, power, clocks, throttle reasons,
// temperature, PCIe link), and GPM activity (SM, occupancy, tensor, DRAM, PCIe bytes)
// from a pair of snapshots taken no closer than `gpm_interval_ns` (NVML needs >= 100 ms).
// Every metric NVML cannot give becomes an invalid sample: an old driver without GPM
// symbols, a pre-Hopper GPU or NOT_SUPPORTED never reads as 0.
//
// PCIe bytes/s come from GPM when it works; otherwise from nvmlDeviceGetPcieThroughput,
// which blocks ~20 ms per direction inside the driver, so it is asked at most every
// `classic_pcie_interval_ns`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sampler/nvml/nvml.h"
#include "samples/clock.h"
#include "samples/metadata.h"
#include "samples/series.h"

namespace chokepoint::sampler::gpu {

struct GpuSamplerOptions {
  int64_t gpm_interval_ns = 100'000'000;
  int64_t classic_pcie_interval_ns = 1'000'000'000;
  // Readings that change rarely (power limit, link maximums, memory size) are asked at
  // most this often: each NVML call costs CPU (docs/BENCHMARKS.md).
  int64_t static_interval_ns = 5'000'000'000;
};

// Which GPUs the watched process tree uses.
struct GpuUse {
  std::vector<unsigned> gpus;  // indexes judged used
  bool pid_match_failed = false;
  // "" when PIDs matched (or no process is on any GPU yet); otherwise why all GPUs are
  // judged: "all GPUs, PID match failed" (the recording's meta.gpu_note).
  std::string note;
};

// Whether a process with this PID exists in our PID namespace (kill(pid, 0): EPERM counts,
// so another user's process is seen even where /proc hides it).
bool pid_exists_here(int64_t pid);

// pids_per_gpu[i]: compute-process PIDs NVML reports on GPU i (host PID namespace).
// When some of them are in the tree, the GPUs holding those PIDs are used. When GPUs run
// processes but none is in the tree, either they are other processes of this machine
// (most of their PIDs exist here: another user's job; the command does not use those GPUs
// and nothing is judged used) or the driver's PID namespace is not ours (a container: no
// such PIDs here), and then all GPUs are judged and the note says so. When no GPU runs
// anything yet, nothing is used and the note is empty. In the container case
// `tree_holds_gpu` (when given) settles it: a tree none of whose processes holds an NVIDIA
// device file open runs no CUDA, so the GPUs are someone else's (`run -- sleep 2` beside
// other users' jobs was "used by the workload, bound by compute": issue 47); nullopt when
// that cannot be read.
GpuUse match_gpu_processes(const std::vector<std::vector<int64_t>>& pids_per_gpu, const std::vector<int64_t>& tree_pids,
                           const std::function<bool(int64_t)>& exists_here = pid_exists_here,
                           const std::function<std::optional<bool>()>& tree_holds_gpu = {});

// Whether any of `pids` has an NVIDIA device file (/dev/nvidia*) open, from /proc/PID/fd;
// nullopt when none of their fd tables could be read (another user's processes).
std::optional<bool> holds_nvidia_device(const std::vector<int64_t>& pids);

class GpuSampler {
 public:
  // Enumerates the devices of `nvml` (which must outlive the sampler). A device NVML
  // cannot open is skipped and listed in skipped().
  explicit GpuSampler(const nvml::Nvml& nvml, GpuSamplerOptions options = {});

  void sample(const samples::TickTime& now, samples::Tick& out);

  // Static facts of each device, for meta.json (pids and used are left to the caller,
  // from match_gpu_processes).
  std::vector<samples::GpuMeta> describe() const;
  // Compute-process PIDs per device, in device order (empty when NVML cannot tell).
  std::vector<std::vector<int64_t>> compute_pids() const;
  size_t device_count() const { return devices_.size(); }
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  struct Dev {
    nvml::Device device;
    bool gpm = false;
    nvml::GpmSample snaps[2];
    int newest = -1;  // index into snaps of the latest snapshot
    int64_t last_gpm_ns = -1;
    int64_t last_pcie_ns = -1;
    int64_t last_static_ns = -1;
  };
  void sample_classic(Dev& d, const samples::TickTime& now, samples::Tick& out);
  void sample_gpm(Dev& d, const samples::TickTime& now, samples::Tick& out);

  const nvml::Nvml& nvml_;
  GpuSamplerOptions opt_;
  std::vector<Dev> devices_;
  std::vector<std::string> skipped_;
};

}  // namespace chokepoint::sampler::gpu
