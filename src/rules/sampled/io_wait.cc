// io-wait: the workload waits on storage: tasks stalled on I/O (PSI io), CPUs idle with
// I/O outstanding (iowait), tasks in uninterruptible sleep, while the tree reads data.
#include <fmt/format.h>

#include "rules/rule.h"
#include "rules/sampled/live_util.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// PSI io "some" of 10% (per interval, else avg10): some task lost a tenth of its time waiting for I/O
// (Documentation/accounting/psi.rst).
constexpr double kMinPsiIoSomePct = 10.0;
// iowait above 5% of all CPUs: the usual sysadmin line (sar / vmstat "wa") for a system
// that waits on its disks; a coarse signal on many-core hosts, hence PSI first.
constexpr double kMinIowaitPct = 5.0;
// A tenth of the run waiting on storage: more than a checkpoint save now and then.
constexpr double kMinShare = 0.10;
}  // namespace

std::optional<Finding> io_wait(const SampleEvidence& c) {
  const samples::Series* psi = analyses::sampled::psi_series(c.rec.samples, MetricId::kHostPsiIoSomePct,
                                                             MetricId::kHostPsiIoSomeAvg10);
  const samples::Series* iowait = host_series(c, MetricId::kHostCpuIowaitPct);
  const int64_t age = max_age_ns(c.la);
  const std::optional<double> share = tick_share(work_ticks(c.la), [&](int64_t t) -> std::optional<bool> {
    const auto p = analyses::sampled::held(psi, t, age), w = analyses::sampled::held(iowait, t, age);
    if (!p && !w) return std::nullopt;
    return p.value_or(0) >= kMinPsiIoSomePct || w.value_or(0) >= kMinIowaitPct;
  });
  if (!share || *share < kMinShare) return std::nullopt;
  const auto& h = c.la.host;
  double tree_read = 0;
  for (const ProcessLive& p : c.la.processes) tree_read += p.read_bytes_per_s ? p.read_bytes_per_s->mean : 0;
  const auto writes = analyses::sampled::stat_of(host_series(c, MetricId::kHostDiskWriteBytesPerS), c.la.start_ns,
                                                 c.la.end_ns);
  const double disk_read = h.disk_read_bytes_per_s ? h.disk_read_bytes_per_s->mean : 0;
  Finding f = new_finding(100 * *share, std::nullopt);
  f.title = fmt::format("Waiting on storage in {:.0f}% of the run (the job reads {:.1f} MB/s)", 100 * *share,
                        tree_read / 1e6);
  f.detail = fmt::format("Tasks stalled on I/O in {:.0f}% of the {:.1f} s run{}{}{}.", 100 * *share, c.la.duration_s,
                         h.psi_io_some ? fmt::format("; PSI io some {:.1f}% on average", h.psi_io_some->mean) : "",
                         h.iowait_pct ? fmt::format(", iowait {:.1f}% of all CPUs", h.iowait_pct->mean) : "",
                         h.procs_blocked ? fmt::format(", {:.1f} tasks blocked", h.procs_blocked->mean) : "");
  f.detail += fmt::format(" The disks read {:.1f} MB/s, the job's processes {:.1f} MB/s{}.", disk_read / 1e6,
                          tree_read / 1e6, writes ? fmt::format("; writes {:.1f} MB/s", writes->mean / 1e6) : "");
  if (tree_read <= 0.1 * disk_read)
    f.detail += " Most reads are not the job's: another process, or swap, loads the disks.";
  if (writes && writes->mean > disk_read) f.detail += " Writes dominate: checkpoints or logs may be what waits.";
  f.evidence = {evidence("io_wait_ticks_pct", 100 * *share, "%", 100 * kMinShare),
                evidence("tree_read_mb_per_s", tree_read / 1e6, "MB/s"),
                evidence("disk_read_mb_per_s", disk_read / 1e6, "MB/s")};
  if (h.psi_io_some) f.evidence.push_back(evidence("psi_io_some_mean_pct", h.psi_io_some->mean, "%"));
  if (h.iowait_pct) f.evidence.push_back(evidence("iowait_mean_pct", h.iowait_pct->mean, "%"));
  if (h.procs_blocked) f.evidence.push_back(evidence("procs_blocked_mean", h.procs_blocked->mean, "tasks"));
  f.recommendation =
      "Read less and read sequentially: pack small files into shards (WebDataset tar, LMDB, "
      "TFRecord, Parquet), copy the dataset to local NVMe or RAM (/dev/shm) before training, keep it in "
      "the page cache if it fits, and hide latency with more DataLoader workers and prefetch_factor; "
      "write checkpoints asynchronously (torch.distributed.checkpoint async_save).";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain io-wait` prints.
extern const Rule io_wait_rule = {
    .id = "io-wait",
    .category = Category::kIo,
    .samples = io_wait,
    .meaning = "The workload waits on storage: tasks stall on I/O while the job reads its data.",
    .detection =
        "From live samples: PSI io pressure of 10%, iowait above 5% of the CPUs, tasks in "
        "uninterruptible sleep, while the tree reads.",
    .action =
        "Faster or local storage, cache the dataset in RAM or on local NVMe, larger sequential "
        "reads, more prefetching workers.",
};

}  // namespace chokepoint::rules
