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
  const auto g = gil_waiting(s, st, ticks, 0, 1000 * kMs);
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
  std::vector<int64_t> ticks = {0, 500 * kMs, 1000 * kMs};
  const auto id = st.series_index(samples::MetricId::kThreadCpuPct, samples::Entity::thread(5, 5));
  st.append(id, ticks[1], 100.0, true);
  st.append(id, ticks[2], 100.0, true);
  EXPECT_TRUE(gil_waiting(s, st, ticks, 0, 1000 * kMs).empty());
}

}  // namespace
}  // namespace chokepoint::analyses
