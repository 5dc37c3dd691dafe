// What a recording knows besides its series: the run, the GPUs and every process of the
// watched tree. meta.json carries all of it at the end of a run; the samples file
// carries process appearances and exits as they happen, so a crashed run keeps them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chokepoint::samples {

inline constexpr int kRecordingFormatVersion = 1;

// How a process relates to the workload; inferred by sampler/proc/process_tree.h.
enum class ProcessRole : uint8_t {
  kLaunched,          // the command `run` started, or the PID `watch` attached to
  kChild,             // any other descendant
  kDataLoaderWorker,  // a PyTorch DataLoader worker process
  kTorchrunRank,      // a training process started by torchrun / torch.distributed.run
};
std::string_view role_name(ProcessRole role);
std::optional<ProcessRole> parse_role(std::string_view name);

struct ProcessMeta {
  int64_t pid = 0;
  int64_t ppid = 0;
  std::string comm;
  std::vector<std::string> cmdline;  // argv; empty for kernel threads or when unreadable
  ProcessRole role = ProcessRole::kChild;
  std::optional<int> rank;    // torchrun ranks: RANK from the environment when readable
  int64_t first_seen_ns = 0;  // CLOCK_REALTIME
  int64_t last_seen_ns = 0;
  bool exited = false;  // seen to go away during the run
  // CPUs the scheduler may run it on (/proc/PID/status Cpus_allowed_list), when read.
  std::optional<std::vector<unsigned>> cpus_allowed;
  // Names of the threads visited (/proc/PID/task/TID/stat comm): Python threads carry the
  // process's name, PyTorch's own are named (pt_autograd_0 ...), CUDA's too.
  std::map<int64_t, std::string> thread_names;
};

struct GpuMeta {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  std::string bus_id;
  std::optional<unsigned> sm_count;
  std::optional<unsigned> max_link_gen;
  std::optional<unsigned> max_link_width;
  std::optional<int> numa_node;      // NVML; absent when the firmware gives none
  std::vector<unsigned> local_cpus;  // CPUs close to the GPU (NVML CPU affinity); empty: unknown
  std::vector<int64_t> pids;         // PIDs of the tree NVML saw on this GPU
  bool used = false;                 // judged as used by the workload (see gpu_note)
};

// Python stack sampling of the run (sampler/pyspy/): what made the stack file, and where
// its clock starts. Absent (tool empty) when stacks were not sampled; `note` says why.
// A short burst of fast samples (`run` takes some to count the job's iterations; the
// whole run's samples are too slow for steps of a few milliseconds).
struct StackBurst {
  std::string file;       // in the recording: "pyspy-burst-1.json"
  int64_t origin_ns = 0;  // CLOCK_REALTIME of the file's ts 0
  double rate_hz = 0;
  bool operator==(const StackBurst&) const = default;
};

struct StacksMeta {
  std::string tool;          // "py-spy 0.4.3"
  std::string file;          // in the recording: "pyspy.json"
  std::string sources_file;  // "sources.json": the text of the job's lines it names
  int64_t origin_ns = 0;     // CLOCK_REALTIME of the file's ts 0
  int64_t pid = 0;           // the process it attached to (with its subprocesses)
  double rate_hz = 0;
  std::string note;  // why there are no stacks, or what went wrong
  std::vector<StackBurst> bursts;
};

struct RunMeta {
  int format_version = kRecordingFormatVersion;
  std::string chokepoint_version;
  std::vector<std::string> command;  // empty for `watch`
  int64_t pid = 0;                   // launched or attached process
  // chokepoint's own process while it records (with host["hostname"]): a reader on the
  // same host tells a recording still being written from one cut by a crash. 0: unknown.
  int64_t recorder_pid = 0;
  int64_t start_ns = 0;           // CLOCK_REALTIME
  std::optional<int64_t> end_ns;  // absent until the run ends
  int64_t interval_ns = 0;
  std::optional<int> exit_code;
  std::map<std::string, std::string> host;  // host facts: hostname, kernel, cpus, memory ...
  std::vector<GpuMeta> gpus;
  // How GPUs were matched to the workload, e.g. "all GPUs, PID match failed"; empty
  // when PIDs matched or no GPU was visible.
  std::string gpu_note;
  // Why there are no GPU metrics ("NVML not found: ...", "no NVIDIA GPU"); empty when
  // GPU metrics were sampled.
  std::string gpu_unavailable;
  std::vector<ProcessMeta> processes;
  // chokepoint's own CPU time per part of the sampling loop, ms over the run ("host",
  // "processes", "gpu", "write"): what watching the job cost.
  std::map<std::string, double> sampler_cpu_ms;
  StacksMeta stacks;
};

}  // namespace chokepoint::samples
