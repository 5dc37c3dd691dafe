#include "analyses/stacks/gil.h"

#include <gtest/gtest.h>

namespace chokepoint::analyses {
namespace {

constexpr int64_t kMs = 1'000'000;

// Two Python threads of pid 5 spin in Python code for 1 s; the /proc samples say each ran
// 50% of a core: each waited for the GIL half the time it wanted it. A third thread
// sleeps (its line calls time.sleep): it wants nothing.
// Ticks every 100 ms over 1 s, and each thread of pid 5 at `pct` % CPU in every tick.
void thread_cpu(const std::vector<std::pair<int64_t, double>>& pct, std::vector<int64_t>& ticks,
                samples::SampleStore& st) {
  for (int k = 0; k <= 10; ++k) ticks.push_back(k * 100 * kMs);
  for (const auto& [tid, p] : pct) {
    const auto id = st.series_index(samples::MetricId::kThreadCpuPct, samples::Entity::thread(5, tid));
    for (int k = 1; k <= 10; ++k) st.append(id, ticks[k], p, true);
  }
}

TEST(GilWaiting, FromStacksAndThreadCpu) {
  samples::PyStacks s;
  s.threads = {{5, 5, "MainThread"}, {5, 6, "worker"}, {5, 7, "sleeper"}};
  s.frames = {{"spin", "w.py", 4}, {"nap", "w.py", 9}};
  s.source_lines["w.py:4"] = "s += i";
  s.source_lines["w.py:9"] = "time.sleep(0.1)";
  s.stacks = {{0}, {1}};
  s.segments = {{0, 0, 0, 1000 * kMs}, {1, 0, 0, 1000 * kMs}, {2, 1, 0, 1000 * kMs}};
  samples::SampleStore st;
  std::vector<int64_t> ticks;
  thread_cpu({{5, 50.0}, {6, 50.0}, {7, 0.0}}, ticks, st);
  const auto g = gil_waiting(s, st, 0, 1000 * kMs);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].pid, 5);
  ASSERT_EQ(g[0].threads.size(), 2u);  // the sleeper wanted no GIL
  EXPECT_NEAR(g[0].want_s, 2.0, 1e-9);
  EXPECT_NEAR(g[0].wait_s, 1.0, 1e-9);
  EXPECT_NEAR(g[0].wait_share(), 0.5, 1e-9);
  EXPECT_TRUE(stack_waits(s, s.stacks[1]));
  EXPECT_FALSE(stack_waits(s, s.stacks[0]));
}

// One busy thread runs whenever it wants: no process to report.
TEST(GilWaiting, OneThreadNeverWaits) {
  samples::PyStacks s;
  s.threads = {{5, 5, "MainThread"}};
  s.frames = {{"spin", "w.py", 4}};
  s.stacks = {{0}};
  s.segments = {{0, 0, 0, 1000 * kMs}};
  samples::SampleStore st;
  const auto id = st.series_index(samples::MetricId::kThreadCpuPct, samples::Entity::thread(5, 5));
  st.append(id, 500 * kMs, 100.0, true);
  st.append(id, 1000 * kMs, 100.0, true);
  EXPECT_TRUE(gil_waiting(s, st, 0, 1000 * kMs).empty());
}

// A main thread in Python code but off the CPU 60% of the time (native code that blocks
// without a line known to wait), beside a pin-memory thread that ran 5% of a core: it can
// have waited for the GIL only while that thread held it, 50 ms, not 600 ms.
TEST(GilWaiting, OffTheCpuBesideAnIdleThreadIsNotWaiting) {
  samples::PyStacks s;
  s.threads = {{5, 5, "MainThread"}, {5, 6, "pin"}};
  s.frames = {{"step", "train.py", 4}, {"_pin_memory_loop", "pin.py", 9}};
  s.source_lines["train.py:4"] = "out = model(x)";
  s.source_lines["pin.py:9"] = "data = pin(data)";
  s.stacks = {{0}, {1}};
  s.segments = {{0, 0, 0, 1000 * kMs}, {1, 1, 0, 1000 * kMs}};
  samples::SampleStore st;
  std::vector<int64_t> ticks;
  thread_cpu({{5, 40.0}, {6, 5.0}}, ticks, st);
  const auto g = gil_waiting(s, st, 0, 1000 * kMs);
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(g[0].threads.size(), 2u);
  const GilThread& main = g[0].threads[0].tid == 5 ? g[0].threads[0] : g[0].threads[1];
  const GilThread& pin = g[0].threads[0].tid == 5 ? g[0].threads[1] : g[0].threads[0];
  EXPECT_NEAR(main.cpu_s, 0.4, 1e-9);
  EXPECT_NEAR(main.wait_s, 0.05, 1e-9);  // not 0.6
  EXPECT_NEAR(pin.wait_s, 0.4, 1e-9);    // off the CPU 0.95 s, while the main thread ran 0.4 s
  EXPECT_NEAR(g[0].wait_share(), 0.45 / 2.0, 1e-9);
}

// A thread's CPU reading is its rate since its previous visit (threads are visited in
// round robin), so it is set against the want of that whole interval: a thread that spins
// in [0, 300 ms) and sleeps after, read once at 600 ms at 50%, ran its 300 ms.
TEST(GilWaiting, AReadingCoversTheThreadsVisitInterval) {
  samples::PyStacks s;
  s.threads = {{5, 5, "MainThread"}, {5, 6, "worker"}};
  s.frames = {{"spin", "w.py", 4}, {"nap", "w.py", 9}};
  s.source_lines["w.py:4"] = "s += i";
  s.source_lines["w.py:9"] = "time.sleep(0.1)";
  s.stacks = {{0}, {1}};
  s.segments = {{0, 0, 0, 300 * kMs}, {0, 1, 300 * kMs, 1200 * kMs}, {1, 0, 0, 1200 * kMs}};
  samples::SampleStore st;
  for (int64_t tid : {5, 6}) {
    const auto id = st.series_index(samples::MetricId::kThreadCpuPct, samples::Entity::thread(5, tid));
    for (int64_t t : {600, 1200}) st.append(id, t * kMs, tid == 5 ? (t == 600 ? 50.0 : 0.0) : 100.0, true);
  }
  const auto g = gil_waiting(s, st, 0, 1200 * kMs);
  ASSERT_EQ(g.size(), 1u);
  for (const GilThread& t : g[0].threads) {
    EXPECT_NEAR(t.wait_s, 0.0, 1e-9) << t.name;
    EXPECT_NEAR(t.run_s, t.tid == 5 ? 0.3 : 1.2, 1e-9) << t.name;
  }
}

}  // namespace
}  // namespace chokepoint::analyses
