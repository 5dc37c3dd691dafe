// The /proc parsers on files captured on the dev VM (tests/data/proc/dev_vm), on the
// H200 machine (tests/data/proc/h200) and on hand-made variants
// (tests/data/proc/variants/make_variants.py).
#include "sampler/proc/proc_parsers.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace chokepoint::sampler::proc {
namespace {

std::string data(const std::string& rel) {
  std::ifstream in(std::string(CHOKEPOINT_TEST_DATA) + "/proc/" + rel, std::ios::binary);
  EXPECT_TRUE(in) << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ParseStat, DevVm) {
  const auto s = parse_stat(data("dev_vm/t0/proc/stat"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cpu.user, 498698u);
  EXPECT_EQ(s->cpu.system, 105647u);
  EXPECT_EQ(s->cpu.idle, 368584u);
  EXPECT_EQ(s->cpu.iowait, 877u);
  EXPECT_EQ(s->cpu.softirq, 177u);
  EXPECT_EQ(s->cpu.steal, 336u);
  EXPECT_EQ(s->cpu_count, 2);
  EXPECT_EQ(s->ctxt, 1927673u);
  EXPECT_EQ(s->procs_running, 3u);
  EXPECT_EQ(s->procs_blocked, 0u);
}

TEST(ParseStat, H200) {
  const auto s = parse_stat(data("h200/proc/stat"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cpu.user, 2322u);
  EXPECT_EQ(s->cpu.system, 765u);
  EXPECT_EQ(s->cpu.idle, 74306u);
  EXPECT_EQ(s->cpu.iowait, 301u);
  EXPECT_EQ(s->cpu.steal, 242u);
  EXPECT_EQ(s->cpu.total(), 2322u + 765 + 74306 + 301 + 33 + 242);
  EXPECT_EQ(s->cpu_count, 16);
  EXPECT_EQ(s->ctxt, 30800u);
  EXPECT_EQ(s->procs_running, 1u);
  EXPECT_FALSE(parse_stat(""));
  EXPECT_FALSE(parse_stat("cpu 1 2\n"));
}

TEST(ParseVmstatAndMeminfo, H200AndDevVm) {
  const VmStat v = parse_vmstat(data("h200/proc/vmstat"));
  EXPECT_EQ(v.pswpin, 0u);
  EXPECT_EQ(v.pswpout, 0u);
  EXPECT_EQ(v.pgmajfault, 2505u);
  EXPECT_EQ(parse_vmstat(data("dev_vm/t0/proc/vmstat")).pgmajfault, 2824u);
  const MemInfo m = parse_meminfo(data("h200/proc/meminfo"));
  EXPECT_EQ(m.mem_total_bytes, 131981020ull * 1024);
  EXPECT_EQ(m.mem_available_bytes, 131478660ull * 1024);
  EXPECT_TRUE(m.swap_total_bytes && m.swap_free_bytes);
  EXPECT_FALSE(parse_meminfo("MemTotal: 10 kB\n").swap_total_bytes);
  EXPECT_EQ(parse_meminfo(data("dev_vm/t0/proc/meminfo")).mem_available_bytes, 23936292ull * 1024);
}

TEST(ParsePressure, BothMachinesHavePsi) {
  const auto cpu = parse_pressure(data("h200/proc/pressure/cpu"));
  ASSERT_TRUE(cpu);
  EXPECT_DOUBLE_EQ(*cpu->some_avg10, 0.23);
  EXPECT_DOUBLE_EQ(*cpu->full_avg10, 0.0);
  const auto io = parse_pressure(data("h200/proc/pressure/io"));
  EXPECT_DOUBLE_EQ(*io->some_avg10, 2.41);
  EXPECT_DOUBLE_EQ(*io->full_avg10, 2.39);
  EXPECT_DOUBLE_EQ(*parse_pressure(data("h200/proc/pressure/memory"))->some_avg10, 0.0);
  EXPECT_DOUBLE_EQ(*parse_pressure(data("dev_vm/t0/proc/pressure/cpu"))->some_avg10, 9.51);
  // Kernels before 5.13 have no "full" line for cpu.
  const auto old = parse_pressure("some avg10=1.50 avg60=0.00 avg300=0.00 total=10\n");
  EXPECT_DOUBLE_EQ(*old->some_avg10, 1.5);
  EXPECT_FALSE(old->full_avg10);
  EXPECT_FALSE(parse_pressure(""));
}

TEST(ParseDiskstats, CountsWholeDisksOnly) {
  const DiskTotals h = parse_diskstats(data("h200/proc/diskstats"));
  EXPECT_EQ(h.disks, 2);  // vda, vdb; loop* and zram0 left out
  EXPECT_EQ(h.sectors_read, 3430522u + 249904u);
  EXPECT_EQ(h.sectors_written, 6336u);
  const DiskTotals v = parse_diskstats(data("variants/t0/proc/diskstats"));
  EXPECT_EQ(v.disks, 1);  // vda1 is a partition of vda
  EXPECT_EQ(v.sectors_read, 1000u);
  for (const char* whole : {"sda", "vdb", "nvme0n1", "mmcblk0", "xvda", "nvme10n2"})
    EXPECT_TRUE(is_whole_disk(whole)) << whole;
  for (const char* part : {"sda1", "vda15", "nvme0n1p1", "mmcblk0p2", "loop3", "dm-0", "md127", "zram0", "sr0"}) {
    EXPECT_FALSE(is_whole_disk(part)) << part;
  }
}

TEST(ParseTaskStat, FieldsAfterTheLastParen) {
  const auto h = parse_task_stat(data("h200/proc/self/stat"));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->comm, "cat");
  EXPECT_EQ(h->state, 'R');
  EXPECT_EQ(h->ppid, 417);
  EXPECT_EQ(h->num_threads, 1);
  EXPECT_EQ(h->starttime, 4879u);
  EXPECT_EQ(h->rss_pages, 473);
  EXPECT_EQ(h->processor, 0);

  const auto d = parse_task_stat(data("dev_vm/t0/proc/12548/task/12591/stat"));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->comm, "python3");
  EXPECT_EQ(d->state, 'R');
  EXPECT_EQ(d->utime, 67u);
  EXPECT_EQ(d->stime, 0u);
  EXPECT_EQ(d->num_threads, 4);

  // comm "py) S 1 (x": a naive split would read state 'S' and ppid 1 from inside it.
  const auto v = parse_task_stat(data("variants/t0/proc/4242/stat"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->comm, "py) S 1 (x");
  EXPECT_EQ(v->state, 'R');
  EXPECT_EQ(v->ppid, 1);
  EXPECT_EQ(v->utime, 150u);
  EXPECT_EQ(v->stime, 50u);
  EXPECT_EQ(v->num_threads, 2);
  EXPECT_EQ(v->rss_pages, 256);
  EXPECT_EQ(v->processor, 1);

  EXPECT_FALSE(parse_task_stat("garbage"));
  EXPECT_FALSE(parse_task_stat("12 (x) R 1 2 3"));  // cut short
  EXPECT_FALSE(parse_task_stat(""));
}

TEST(ParseTaskFiles, StatusSchedstatIo) {
  const TaskStatus s = parse_task_status(data("h200/proc/self/status"));
  EXPECT_EQ(s.vm_rss_bytes, 2068u * 1024);
  EXPECT_EQ(s.threads, 1);
  EXPECT_EQ(s.voluntary_ctxt_switches, 2u);
  EXPECT_EQ(s.nonvoluntary_ctxt_switches, 0u);
  ASSERT_TRUE(s.cpus_allowed);
  EXPECT_EQ(s.cpus_allowed->size(), 16u);  // "0-15" on the H200 VM
  const TaskStatus t = parse_task_status(data("dev_vm/t0/proc/12548/task/12591/status"));
  EXPECT_EQ(t.voluntary_ctxt_switches, 337u);
  EXPECT_EQ(t.nonvoluntary_ctxt_switches, 440u);
  EXPECT_EQ(t.cpus_allowed, (std::vector<unsigned>{0, 1}));

  const auto sched = parse_schedstat(data("h200/proc/self/schedstat"));
  ASSERT_TRUE(sched);
  EXPECT_EQ(sched->on_cpu_ns, 366139u);
  EXPECT_EQ(sched->runq_wait_ns, 0u);
  EXPECT_EQ(sched->slices, 3u);
  const auto dsched = parse_schedstat(data("dev_vm/t0/proc/12548/task/12591/schedstat"));
  EXPECT_EQ(dsched->runq_wait_ns, 270805095u);
  EXPECT_FALSE(parse_schedstat("12 34\n"));

  const IoStat io = parse_io(data("dev_vm/t0/proc/12548/io"));
  EXPECT_EQ(io.read_bytes, 53248u);
  EXPECT_EQ(io.write_bytes, 0u);
  EXPECT_EQ(parse_io(data("h200/proc/self/io")).read_bytes, 0u);
  EXPECT_FALSE(parse_io("").read_bytes);
}

TEST(ParseCmdline, ArgvAndEnviron) {
  EXPECT_EQ(parse_cmdline(data("dev_vm/t0/proc/12548/cmdline")),
            (std::vector<std::string>{"/root/.pyenv/versions/3.11.7/bin/python3", "-"}));
  EXPECT_TRUE(parse_cmdline("").empty());
  const std::string env("PATH=/bin\0RANK=3\0LOCAL_RANK=1\0", 30);
  EXPECT_EQ(find_environ(env, "RANK"), "3");
  EXPECT_EQ(find_environ(env, "LOCAL_RANK"), "1");
  EXPECT_FALSE(find_environ(env, "WORLD_SIZE"));
}

}  // namespace
}  // namespace chokepoint::sampler::proc
