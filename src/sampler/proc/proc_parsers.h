// Parsers of the /proc files the live sampler reads (docs/FORMATS.md "/proc"). Pure
// functions of the file text, so tests feed captured files; counters are returned raw
// (cumulative) and the samplers turn them into rates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chokepoint::sampler::proc {

// The aggregate "cpu" line of /proc/stat, in USER_HZ ticks.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  // guest and guest_nice are already inside user and nice: not added again.
  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

struct SystemStat {
  CpuTimes cpu;
  int cpu_count = 0;  // "cpuN" lines
  uint64_t ctxt = 0;
  uint64_t procs_running = 0;
  uint64_t procs_blocked = 0;
};
std::optional<SystemStat> parse_stat(std::string_view text);

struct VmStat {
  std::optional<uint64_t> pswpin, pswpout, pgmajfault;
};
VmStat parse_vmstat(std::string_view text);

// /proc/pressure/{cpu,memory,io}: "some avg10=.. avg60=.. avg300=.. total=..", "full ...".
// cpu has a "full" line since Linux 5.13 (always zero at the system level).
struct Pressure {
  std::optional<double> some_avg10, full_avg10;
  std::optional<uint64_t> some_total_us, full_total_us;  // stall time since boot
};
std::optional<Pressure> parse_pressure(std::string_view text);

// Whole disks only: partitions, device-mapper, md, loop, ram and zram devices would
// count the same bytes twice (or are not storage).
bool is_whole_disk(std::string_view name);
struct DiskTotals {
  uint64_t sectors_read = 0;  // 512-byte units whatever the device's sector size
  uint64_t sectors_written = 0;
  int disks = 0;
};
DiskTotals parse_diskstats(std::string_view text);

// /proc/meminfo: the lines it lacks stay nullopt (the kernel writes them in kB).
struct MemInfo {
  std::optional<uint64_t> mem_total_bytes, mem_available_bytes;
  std::optional<uint64_t> swap_total_bytes, swap_free_bytes;
};
MemInfo parse_meminfo(std::string_view text);

// /proc/PID/stat and /proc/PID/task/TID/stat. The fields are read after the LAST ')':
// comm (field 2) may itself hold ')' and spaces.
struct TaskStat {
  std::string comm;
  char state = '?';         // field 3
  int64_t ppid = 0;         // field 4
  uint64_t utime = 0;       // field 14, clock ticks
  uint64_t stime = 0;       // field 15
  int64_t num_threads = 0;  // field 20
  uint64_t starttime = 0;   // field 22, clock ticks after boot
  int64_t rss_pages = 0;    // field 24
  int processor = -1;       // field 39: CPU it last ran on
};
std::optional<TaskStat> parse_task_stat(std::string_view text);

struct TaskStatus {
  std::optional<uint64_t> voluntary_ctxt_switches, nonvoluntary_ctxt_switches;
  std::optional<int64_t> threads;
  std::optional<uint64_t> vm_rss_bytes;
  std::optional<std::vector<unsigned>> cpus_allowed;  // Cpus_allowed_list
};
TaskStatus parse_task_status(std::string_view text);

// /proc/PID/schedstat: time on CPU (ns), time waiting on a run queue (ns), slices run.
struct SchedStat {
  uint64_t on_cpu_ns = 0, runq_wait_ns = 0, slices = 0;
};
std::optional<SchedStat> parse_schedstat(std::string_view text);

// /proc/PID/io: bytes that reached (or came from) the storage layer.
struct IoStat {
  std::optional<uint64_t> read_bytes, write_bytes;
};
IoStat parse_io(std::string_view text);

// /proc/PID/cmdline: NUL-separated argv.
std::vector<std::string> parse_cmdline(std::string_view text);
// One variable of /proc/PID/environ (NUL-separated NAME=value).
std::optional<std::string> find_environ(std::string_view environ, std::string_view name);

}  // namespace chokepoint::sampler::proc
