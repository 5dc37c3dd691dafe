#include "rules/checks/checks.h"

#include <string>

#include "doctor/format.h"

namespace chokepoint::rules::checks {

using namespace doctor;
namespace {

// /dev/shm: PyTorch DataLoader workers hand every batch to the main process through
// shared memory; Docker's default of 64 MiB makes them die with "Bus error" /
// "insufficient shared memory" (PyTorch README: use --ipc=host or --shm-size). 1 GiB
// holds a few prefetched batches of images for a handful of workers.
constexpr uint64_t kShmMinBytes = 1ull << 30;
// Free space below this while nothing runs usually means segments leaked by killed
// workers (they stay until deleted).
constexpr uint64_t kShmMinFreeBytes = 512ull << 20;
// Under this share of RAM, large batches x num_workers x prefetch_factor may not fit
// even when the absolute size looks fine (tmpfs defaults to 50% of RAM).
constexpr double kShmNoteFractionOfRam = 0.10;
// RLIMIT_MEMLOCK: RDMA (NCCL over InfiniBand/RoCE, GPUDirect RDMA) registers buffers
// against it; InfiniBand and NCCL deployment guides set it to unlimited. 1 GiB is our
// floor below which registration of a multi-GPU job's buffers is likely to fail.
constexpr uint64_t kMemlockMinBytes = 1ull << 30;
// MemAvailable below this share of RAM: the kernel is about to reclaim page cache
// and swap; data loading slows and the OOM killer is near.
constexpr double kLowMemAvailableFraction = 0.10;

}  // namespace

Assessment check_cpu_governor(const HostFacts& f) {
  Assessment c = pass("cpu-governor", "CPU frequency governor", Assessment::Scope::kHost);
  c.expected = "performance";
  if (f.governors.empty()) {
    return skipped(c,
                   "no cpufreq interface (usual in VMs and many containers: the hypervisor or firmware sets CPU "
                   "frequency)");
  }
  unsigned total = 0, performance = 0;
  std::string list;
  for (const auto& [gov, n] : f.governors) {
    total += n;
    if (gov == "performance") performance += n;
    list += (list.empty() ? "" : ", ") + gov + " on " + std::to_string(n) + " CPU" + (n > 1 ? "s" : "");
  }
  c.observed = list;
  if (performance < total) {
    raise(c, Severity::kWarning);
    c.advice =
        "CPUs that idle between short bursts clock down, and ramping back up delays kernel launches, "
        "Python overhead and data loading. `sudo cpupower frequency-set -g performance` (or the tuned "
        "profile throughput-performance) for training hosts.";
  }
  return c;
}

Assessment check_swap(const HostFacts& f) {
  Assessment c = pass("host-swapping", "Swap and memory pressure", Assessment::Scope::kHost);
  c.expected = "no swap use and no swap-in/out since boot";
  if (!f.meminfo) return skipped(c, "/proc/meminfo not readable");
  // collect_host_facts keeps a meminfo only with these three.
  const uint64_t total = *f.meminfo->mem_total_bytes, swap_total = *f.meminfo->swap_total_bytes,
                 swap_free = *f.meminfo->swap_free_bytes;
  const std::optional<uint64_t> available = f.meminfo->mem_available_bytes;
  const uint64_t used = swap_total > swap_free ? swap_total - swap_free : 0;
  std::string obs = swap_total == 0 ? "no swap configured"
                                    : format_bytes(used) + " of " + format_bytes(swap_total) + " swap used";
  if (f.swap_activity) {
    obs += "; " + std::to_string(f.swap_activity->pswpin) + " pages swapped in, " +
           std::to_string(f.swap_activity->pswpout) + " out since boot";
  }
  if (available) obs += "; " + format_bytes(*available) + " of " + format_bytes(total) + " RAM available";
  c.observed = obs;
  const bool swapped = used > 0 || (f.swap_activity && (f.swap_activity->pswpin + f.swap_activity->pswpout) > 0);
  if (swapped) {
    raise(c, Severity::kWarning);
    c.advice =
        "This host has swapped: a training process whose pages were swapped out stalls on every fault, "
        "and pinned staging buffers cannot be swapped at all, so others are. Use fewer DataLoader workers "
        "or smaller prefetch, add RAM, or lower vm.swappiness.";
  }
  if (available && static_cast<double>(*available) < kLowMemAvailableFraction * static_cast<double>(total)) {
    raise(c, Severity::kWarning);
    c.advice += std::string(c.advice.empty() ? "" : " ") +
                "Less than 10% of RAM is available: page cache is being squeezed out (slower data loading) and "
                "the OOM killer is close.";
  }
  return c;
}

Assessment check_transparent_hugepages(const HostFacts& f) {
  Assessment c = pass("transparent-hugepages", "Transparent huge pages", Assessment::Scope::kHost);
  c.expected = "enabled = always or madvise, defrag not 'always'";
  if (!f.thp_enabled) return skipped(c, "/sys/kernel/mm/transparent_hugepage not readable (kernel without THP?)");
  c.observed = "enabled = " + *f.thp_enabled + (f.thp_defrag ? ", defrag = " + *f.thp_defrag : "");
  if (*f.thp_enabled == "always" && f.thp_defrag && *f.thp_defrag == "always") {
    raise(c, Severity::kWarning);
    c.advice =
        "With defrag = always, a thread that touches new memory stalls while the kernel compacts memory "
        "(kernel admin guide, transhuge.rst): latency spikes in data loading. "
        "`echo defer+madvise | sudo tee /sys/kernel/mm/transparent_hugepage/defrag`.";
  } else if (*f.thp_enabled == "never") {
    c.advice =
        "Huge pages are off: PyTorch's THP_MEM_ALLOC_ENABLE=1 (2 MiB pages for large CPU tensors) has no "
        "effect. Fine unless host-side tensor work is heavy.";
  }
  return c;
}

Assessment check_memlock(const HostFacts& f) {
  Assessment c = pass("memlock", "Locked-memory limit (ulimit -l)", Assessment::Scope::kHost);
  c.expected = "unlimited (or at least 1 GiB) for multi-GPU / multi-node jobs";
  if (!f.memlock) return skipped(c, "RLIMIT_MEMLOCK not readable");
  const machine::MemlockLimit& m = *f.memlock;
  auto text = [](bool unlimited, uint64_t bytes) { return unlimited ? std::string("unlimited") : format_bytes(bytes); };
  c.observed = "soft " + text(m.soft_unlimited, m.soft_bytes) + ", hard " + text(m.hard_unlimited, m.hard_bytes);
  if (!m.soft_unlimited && m.soft_bytes < kMemlockMinBytes) {
    raise(c, Severity::kWarning);
    c.advice =
        "RDMA (NCCL over InfiniBand/RoCE, GPUDirect RDMA, GPUDirect Storage) pins its buffers against this "
        "limit and fails to register them when it is small; single-node jobs are not affected "
        "(cudaHostAlloc/pin_memory do not count against it). Raise it: `ulimit -l unlimited`, "
        "/etc/security/limits.conf (memlock), or `docker run --ulimit memlock=-1`.";
  }
  return c;
}

Assessment check_dev_shm(const HostFacts& f) {
  Assessment c = pass("dev-shm", "Shared memory (/dev/shm)", Assessment::Scope::kHost);
  c.expected = "at least 1 GiB, mostly free";
  if (!f.dev_shm) return skipped(c, "/dev/shm is not mounted or not readable");
  const machine::FsSpace& s = *f.dev_shm;
  c.observed = format_bytes(s.total_bytes) + " size, " + format_bytes(s.available_bytes) + " free";
  if (f.meminfo && *f.meminfo->mem_total_bytes > 0)
    c.observed += " (RAM " + format_bytes(*f.meminfo->mem_total_bytes) + ")";
  const char* why =
      "DataLoader workers (num_workers > 0) pass every batch through /dev/shm; when it is too small they die with "
      "\"Bus error\" or \"insufficient shared memory\".";
  if (s.total_bytes < kShmMinBytes) {
    raise(c, Severity::kWarning);
    c.advice = std::string(why) +
               " Containers: `docker run --shm-size=16g` (or --ipc=host); Kubernetes: mount an "
               "emptyDir with medium: Memory at /dev/shm.";
  } else if (s.available_bytes < kShmMinFreeBytes) {
    raise(c, Severity::kWarning);
    c.advice = std::string(why) +
               " It is nearly full: killed workers leave segments behind; "
               "look at `ls -la /dev/shm` and remove stale torch_* files.";
  } else if (f.meminfo && static_cast<double>(s.total_bytes) <
                              kShmNoteFractionOfRam * static_cast<double>(*f.meminfo->mem_total_bytes)) {
    c.advice =
        "Under 10% of RAM: enough for typical loaders; if workers crash with big batches, size it for "
        "batch bytes x num_workers x prefetch_factor.";
  }
  return c;
}

}  // namespace chokepoint::rules::checks
