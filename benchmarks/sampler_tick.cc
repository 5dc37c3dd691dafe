// Cost of one live sampling tick (docs/BENCHMARKS.md, "Live sampler tick"): the /proc
// backend over a real process tree of 20 processes x 50 threads (this benchmark forks
// them; they sleep on a pipe), and the recording writer encoding and writing that tick.
// CPU time is this process's, which is what chokepoint itself spends.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "sampler/proc/host_sampler.h"
#include "sampler/proc/process_sampler.h"
#include "samples/recording_writer.h"

namespace {

using namespace chokepoint;

constexpr int kProcesses = 20;
constexpr int kThreadsPerProcess = 50;

// Forks the tree once per benchmark program; the children exit when the pipe closes.
class Tree {
 public:
  Tree() {
    if (pipe(fds_) != 0) std::abort();
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        close(fds_[1]);
        std::vector<std::thread> threads;
        for (int t = 1; t < kThreadsPerProcess; ++t) {
          threads.emplace_back([fd = fds_[0]] {
            char c;
            while (read(fd, &c, 1) > 0) {
            }
          });
        }
        char c;
        while (read(fds_[0], &c, 1) > 0) {
        }
        for (auto& t : threads) t.join();
        _exit(0);
      }
      children_.push_back(pid);
    }
    close(fds_[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the threads start
  }
  ~Tree() {
    close(fds_[1]);
    for (pid_t p : children_) waitpid(p, nullptr, 0);
  }

 private:
  int fds_[2];
  std::vector<pid_t> children_;
};

Tree& tree() {
  static Tree t;
  return t;
}

void tick_benchmark(benchmark::State& state, size_t thread_visits) {
  tree();
  auto pfs = sampler::proc::ProcFs::live();
  sampler::proc::HostSampler host(pfs);
  auto opt = sampler::proc::live_process_options({getpid()});
  opt.thread_visits_per_tick = thread_visits;
  sampler::proc::ProcessSampler procs(pfs, opt);
  samples::Tick tick;
  size_t samples_per_tick = 0;
  for (auto _ : state) {
    tick.samples.clear();
    tick.time_ns = samples::now().realtime_ns;
    const auto now = samples::now();
    host.sample(now, tick);
    procs.sample(now, tick);
    samples_per_tick = tick.samples.size();
  }
  state.counters["processes"] = static_cast<double>(procs.live_pids().size());
  state.counters["samples"] = static_cast<double>(samples_per_tick);
  state.counters["held_fds"] = static_cast<double>(pfs.held_descriptors());
}

// Argument: threads visited per tick (0: processes only; the default; every thread).
void BM_ProcTick(benchmark::State& state) { tick_benchmark(state, static_cast<size_t>(state.range(0))); }

void BM_RecordingAppend(benchmark::State& state) {
  // A tick as the default sampler produces for the tree above, plus 2 GPUs x 21 metrics.
  samples::Tick tick;
  tick.time_ns = samples::now().realtime_ns;
  for (int m = 0; m < 20; ++m) tick.add(static_cast<samples::MetricId>(m + 21), samples::Entity::host(), 12.5 * m);
  for (int g = 0; g < 2; ++g) {
    for (int m = 0; m < 21; ++m) tick.add(static_cast<samples::MetricId>(m), samples::Entity::gpu(g), 96.6 + m);
  }
  for (int p = 0; p < kProcesses + 1; ++p) {
    for (int m = 0; m < 9; ++m)
      tick.add(static_cast<samples::MetricId>(41 + m), samples::Entity::process(1000 + p), 1234.5 * m);
  }
  for (int t = 0; t < 32; ++t) {
    for (int m = 0; m < 5; ++m)
      tick.add(static_cast<samples::MetricId>(50 + m), samples::Entity::thread(1000, 2000 + t), 83);
  }
  const std::string dir = "/tmp/chokepoint_bench_recording_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  auto w = samples::RecordingWriter::create(dir, samples::RunMeta{});
  if (!w.ok()) {
    state.SkipWithError(w.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    tick.time_ns += 100'000'000;
    if (!w.value()->append(tick).ok()) state.SkipWithError("append failed");
  }
  state.counters["samples"] = static_cast<double>(tick.samples.size());
  state.counters["bytes_per_tick"] = static_cast<double>(w.value()->bytes_written()) /
                                     static_cast<double>(state.iterations());
  std::filesystem::remove_all(dir);
}

BENCHMARK(BM_ProcTick)
    ->Arg(0)
    ->Arg(32)
    ->Arg(static_cast<int64_t>(sampler::proc::ProcessSamplerOptions{}.thread_visits_per_tick))
    ->Arg(kProcesses* kThreadsPerProcess + 1)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0);
BENCHMARK(BM_RecordingAppend)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
