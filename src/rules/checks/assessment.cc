#include "rules/checks/checks.h"
#include "rules/rule.h"

#include <algorithm>

namespace chokepoint::rules {

std::string_view verdict_of(const Assessment& a) {
  switch (a.outcome) {
    case Assessment::Outcome::kPass: return "ok";
    case Assessment::Outcome::kSkipped: return "skip";
    case Assessment::Outcome::kFinding: return severity_name(a.severity);
  }
  return "skip";
}

int exit_code_for(const std::vector<Assessment>& all) {
  for (const auto& a : all) {
    if (a.outcome == Assessment::Outcome::kFinding && a.severity == Severity::kCritical) return 1;
  }
  return 0;
}

namespace checks {

namespace {

template <Assessment (*Check)(const doctor::GpuFacts&, const doctor::NvmlFacts&)>
std::vector<Assessment> each_gpu(const MachineEvidence& m) {
  std::vector<Assessment> out;
  for (const auto& g : m.nvml.gpus) {
    if (g.handle_error == 0) out.push_back(Check(g, m.nvml));
  }
  return out;
}

}  // namespace

std::vector<Assessment> nvidia_driver(const MachineEvidence& m) { return {check_nvidia_driver(m.nvml)}; }
std::vector<Assessment> cuda_compat(const MachineEvidence& m) {
  // Without a driver nvidia-driver says so once: the CUDA comparison would only repeat it.
  if (!m.nvml.available) return {};
  return {check_cuda_compat(m.nvml, m.host)};
}
std::vector<Assessment> gpu_access(const MachineEvidence& m) {
  std::vector<Assessment> out;
  for (const auto& g : m.nvml.gpus) {
    if (g.handle_error != 0) out.push_back(check_gpu_access(g, m.nvml));
  }
  return out;
}
std::vector<Assessment> pcie_link_degraded(const MachineEvidence& m) { return each_gpu<check_pcie_link>(m); }
std::vector<Assessment> persistence_mode(const MachineEvidence& m) { return each_gpu<check_persistence_mode>(m); }
std::vector<Assessment> clock_throttled(const MachineEvidence& m) { return each_gpu<check_clocks>(m); }
std::vector<Assessment> memory_errors(const MachineEvidence& m) { return each_gpu<check_memory_errors>(m); }
std::vector<Assessment> gpu_shared(const MachineEvidence& m) { return each_gpu<check_other_processes>(m); }
std::vector<Assessment> numa_mismatch(const MachineEvidence& m) {
  std::vector<Assessment> out;
  for (const auto& g : m.nvml.gpus) {
    if (g.handle_error == 0) out.push_back(check_numa_affinity(g, m.host));
  }
  return out;
}
std::vector<Assessment> gpm_metrics(const MachineEvidence& m) { return each_gpu<check_gpm>(m); }
std::vector<Assessment> cpu_governor(const MachineEvidence& m) { return {check_cpu_governor(m.host)}; }
std::vector<Assessment> host_swapping(const MachineEvidence& m) { return {check_swap(m.host)}; }
std::vector<Assessment> transparent_hugepages(const MachineEvidence& m) {
  return {check_transparent_hugepages(m.host)};
}
std::vector<Assessment> memlock(const MachineEvidence& m) { return {check_memlock(m.host)}; }
std::vector<Assessment> dev_shm(const MachineEvidence& m) { return {check_dev_shm(m.host)}; }

Assessment pass(const char* id, const char* title, Assessment::Scope scope, int gpu) {
  Assessment a;
  a.id = id;
  a.title = title;
  a.gpu = gpu;
  a.scope = scope;
  a.outcome = Assessment::Outcome::kPass;
  return a;
}

Assessment skipped(Assessment a, std::string why) {
  a.outcome = Assessment::Outcome::kSkipped;
  a.observed = std::move(why);
  return a;
}

void raise(Assessment& a, Severity s, const std::string& advice) {
  if (a.outcome != Assessment::Outcome::kFinding) {
    a.outcome = Assessment::Outcome::kFinding;
    a.severity = s;
  } else {
    a.severity = std::max(a.severity, s);
  }
  if (!advice.empty()) a.advice += (a.advice.empty() ? "" : " ") + advice;
}

}  // namespace checks

// The rule (listed in registry.cc); its texts are what `chokepoint explain nvidia-driver` prints.
extern const Rule nvidia_driver_rule = {
    .id = "nvidia-driver",
    .category = Category::kCompute,
    .machine = checks::nvidia_driver,
    .meaning = "No NVIDIA driver, or no GPU visible to this process.",
    .detection = "doctor: NVML loads and reports at least one GPU.",
    .action = "Install the driver; check CUDA_VISIBLE_DEVICES and the container's GPU access (--gpus).",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain cuda-compat` prints.
extern const Rule cuda_compat_rule = {
    .id = "cuda-compat",
    .category = Category::kCompute,
    .machine = checks::cuda_compat,
    .meaning =
        "PyTorch was built for a newer CUDA than the driver supports, so it cannot use the GPU "
        "(or runs in compatibility mode).",
    .detection = "doctor: the CUDA version of the installed PyTorch against the driver's.",
    .action = "Update the driver, or install the PyTorch build for the driver's CUDA version.",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain gpu-access` prints.
extern const Rule gpu_access_rule = {
    .id = "gpu-access",
    .category = Category::kCompute,
    .machine = checks::gpu_access,
    .meaning = "A GPU does not answer NVML queries (lost, fallen off the bus, or not permitted).",
    .detection = "doctor: NVML queries on each GPU.",
    .action = "Check dmesg for Xid errors, reset or reboot; check device permissions in containers.",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain persistence-mode` prints.
extern const Rule persistence_mode_rule = {
    .id = "persistence-mode",
    .category = Category::kCompute,
    .machine = checks::persistence_mode,
    .meaning =
        "Persistence mode is off: the driver tears the GPU down when no process uses it, so each "
        "start pays the initialization again.",
    .detection = "doctor: NVML persistence mode.",
    .action = "nvidia-smi -pm 1, or run nvidia-persistenced.",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain memory-errors` prints.
extern const Rule memory_errors_rule = {
    .id = "memory-errors",
    .category = Category::kMemory,
    .machine = checks::memory_errors,
    .meaning =
        "ECC is off, or the GPU reports uncorrectable memory errors or pending/failed row "
        "remapping: results can be wrong and the GPU may need a reset or service.",
    .detection = "doctor: NVML ECC mode, error counters, row remapping and page retirement.",
    .action =
        "Reset the GPU to apply pending remaps; contact the vendor for failed remapping; enable "
        "ECC.",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain gpu-shared` prints.
extern const Rule gpu_shared_rule = {
    .id = "gpu-shared",
    .category = Category::kMemory,
    .machine = checks::gpu_shared,
    .bench = checks::bench_gpu_shared,
    .meaning = "Other processes run on the GPU and take its time and memory.",
    .detection = "doctor: NVML's list of compute processes on each GPU.",
    .action = "Stop them or move the job to a free GPU (CUDA_VISIBLE_DEVICES).",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain gpm-metrics` prints.
extern const Rule gpm_metrics_rule = {
    .id = "gpm-metrics",
    .category = Category::kCompute,
    .machine = checks::gpm_metrics,
    .meaning =
        "GPM (SM, tensor and DRAM activity) is not available: live verdicts on a busy GPU cannot "
        "tell compute from memory and are less confident.",
    .detection = "doctor: NVML GPM support (Hopper and newer).",
    .action =
        "Nothing to fix on older GPUs; on Hopper update the driver. Use a trace (torch.profiler "
        "or run --trace) for the detail.",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain cpu-governor` prints.
extern const Rule cpu_governor_rule = {
    .id = "cpu-governor",
    .category = Category::kHost,
    .machine = checks::cpu_governor,
    .bench = checks::bench_governor,
    .meaning =
        "The CPU frequency governor is not performance: launches and data loading run on slower "
        "or waking cores.",
    .detection = "doctor: /sys/devices/system/cpu/*/cpufreq/scaling_governor.",
    .action = "cpupower frequency-set -g performance (or the BIOS power profile).",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain transparent-hugepages` prints.
extern const Rule transparent_hugepages_rule = {
    .id = "transparent-hugepages",
    .category = Category::kHost,
    .machine = checks::transparent_hugepages,
    .meaning = "Transparent huge pages are off, or defrag is 'always' (stalls on allocation).",
    .detection = "doctor: /sys/kernel/mm/transparent_hugepage/enabled and defrag.",
    .action = "enabled = always or madvise, defrag = madvise or defer.",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain memlock` prints.
extern const Rule memlock_rule = {
    .id = "memlock",
    .category = Category::kCommunication,
    .machine = checks::memlock,
    .meaning =
        "The locked-memory limit is low: NCCL and pinned buffers of multi-GPU jobs fail or fall "
        "back to slower paths.",
    .detection = "doctor: ulimit -l (RLIMIT_MEMLOCK) against 1 GiB.",
    .action = "ulimit -l unlimited (limits.conf, or the container's --ulimit memlock=-1).",
};

// The rule (listed in registry.cc); its texts are what `chokepoint explain dev-shm` prints.
extern const Rule dev_shm_rule = {
    .id = "dev-shm",
    .category = Category::kInput,
    .machine = checks::dev_shm,
    .meaning =
        "/dev/shm is small or full: DataLoader workers pass batches through shared memory and "
        "fail with bus errors.",
    .detection = "doctor: size and free space of /dev/shm against 1 GiB.",
    .action = "Mount a larger /dev/shm (docker --shm-size, or --ipc=host).",
};

}  // namespace chokepoint::rules
