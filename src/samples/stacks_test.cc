#include "samples/stacks.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace chokepoint::samples {
namespace {

constexpr int64_t kMs = 1'000'000;

// One thread of pid 7 on `stacks` (frame names, innermost first), one segment per `every`
// ms from `from` to `to`, cycling through the stacks.
PyStacks sampled(const std::vector<std::vector<std::string>>& stacks, int64_t from, int64_t to, int64_t every) {
  PyStacks s;
  s.threads.push_back({7, 70, "MainThread"});
  for (const auto& names : stacks) {
    std::vector<int32_t> ids;
    for (const auto& n : names) {
      s.frames.push_back({n, "train.py", static_cast<int32_t>(s.frames.size() + 1)});
      ids.push_back(static_cast<int32_t>(s.frames.size() - 1));
    }
    s.stacks.push_back(ids);
  }
  int32_t i = 0;
  for (int64_t t = from; t < to; t += every, ++i) {
    s.segments.push_back({0, i % static_cast<int32_t>(stacks.size()), t * kMs, (t + every) * kMs});
  }
  return s;
}

int64_t total_ns(const PyStacks& s) {
  int64_t n = 0;
  for (const auto& g : s.segments) n += g.end_ns - g.start_ns;
  return n;
}

// A whole run at 20 Hz with one 500 Hz burst inside it: the burst's samples replace the
// run's where it ran, cut at its edges, and the same frames, stacks and thread keep one id.
TEST(WithBursts, ABurstTakesThePlaceOfTheRunsSamplesWhereItRan) {
  const PyStacks base = sampled({{"step"}}, 0, 1000, 50);
  PyStacks burst = sampled({{"step"}, {"item"}}, 210, 410, 2);
  // The burst names the same frame "step" as the base, but it was built with its own ids:
  // make its first frame equal the base's.
  burst.frames[0] = base.frames[0];
  const PyStacks m = with_bursts(base, {burst});
  EXPECT_EQ(m.threads.size(), 1u);
  EXPECT_EQ(m.frames.size(), 2u);  // "step" once, "item"
  EXPECT_EQ(m.stacks.size(), 2u);
  EXPECT_EQ(total_ns(m), total_ns(base));
  int64_t item = 0;
  for (size_t i = 0; i < m.segments.size(); ++i) {
    const auto& g = m.segments[i];
    if (i > 0) {
      EXPECT_LE(m.segments[i - 1].end_ns, g.start_ns) << i;
    }
    if (m.frames[m.stacks[g.stack][0]].function == "item") item += g.end_ns - g.start_ns;
    // Inside the burst only 2 ms segments; the base's 200-250 ms segment is cut at 210 ms.
    if (g.start_ns >= 210 * kMs && g.end_ns <= 410 * kMs) {
      EXPECT_EQ(g.end_ns - g.start_ns, 2 * kMs) << i;
    }
  }
  EXPECT_EQ(item, 100 * kMs);  // half the burst's 200 ms
}

// A burst of another process leaves this one's samples alone; no bursts: the base itself.
TEST(WithBursts, OnlyTheProcessesABurstSampled) {
  const PyStacks base = sampled({{"step"}}, 0, 1000, 50);
  PyStacks other = sampled({{"worker"}}, 200, 400, 2);
  other.threads[0] = {8, 80, "MainThread"};
  const PyStacks m = with_bursts(base, {other});
  EXPECT_EQ(m.threads.size(), 2u);
  EXPECT_EQ(total_ns(m), total_ns(base) + 200 * kMs);
  EXPECT_EQ(with_bursts(base, {}).segments.size(), base.segments.size());
}

}  // namespace
}  // namespace chokepoint::samples
