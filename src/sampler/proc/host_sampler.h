// System-wide signals of one tick from /proc: CPU split, run queue, context switches,
// swapping, major faults, PSI, disk throughput, available memory. Rates come from the
// counter deltas between two ticks over the CLOCK_MONOTONIC interval, so the first
// tick gives levels only. A file that is missing (PSI needs CONFIG_PSI and psi=1) makes
// its metrics invalid samples rather than zeros.
#pragma once

#include <optional>
#include <string>

#include "sampler/proc/proc_fs.h"
#include "sampler/proc/proc_parsers.h"
#include "samples/clock.h"
#include "samples/series.h"

namespace chokepoint::sampler::proc {

class HostSampler {
 public:
  explicit HostSampler(ProcFs& fs) : fs_(fs) {}

  void sample(const samples::TickTime& now, samples::Tick& out);

  // From the last tick, for the recording's host facts.
  int cpu_count() const { return cpu_count_; }
  std::optional<uint64_t> mem_total_bytes() const { return mem_total_; }

 private:
  void sample_stat(double dt_s, samples::Tick& out);
  void sample_vmstat(double dt_s, samples::Tick& out);
  void sample_pressure(double dt_s, samples::Tick& out);
  void sample_disks(double dt_s, samples::Tick& out);
  void sample_meminfo(samples::Tick& out);

  ProcFs& fs_;
  std::string buf_;  // reused for every file
  int64_t last_mono_ns_ = -1;
  std::optional<SystemStat> last_stat_;
  VmStat last_vm_;
  Pressure last_psi_[3];  // cpu, memory, io
  std::optional<DiskTotals> last_disks_;
  int cpu_count_ = 0;
  std::optional<uint64_t> mem_total_;
};

}  // namespace chokepoint::sampler::proc
