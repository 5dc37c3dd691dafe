#include "analyses/stacks/loop_steps.h"

#include <gtest/gtest.h>

namespace chokepoint::analyses {
namespace {

// A main thread sampled every `dt_ns` running a loop of `lines` (line, time) pairs in
// train.py main(), each line calling into a library frame; `every`-th iteration also
// spends `extra_ns` at line 90 (an evaluation); the first line of every `wait_every`-th
// iteration takes `wait_ns` longer (a batch the loader was late with).
samples::PyStacks loop(const std::vector<std::pair<int, int64_t>>& lines, int iterations, int64_t dt_ns, int every = 0,
                       int64_t extra_ns = 0, int wait_every = 0, int64_t wait_ns = 0) {
  samples::PyStacks s;
  s.rate_hz = 1e9 / static_cast<double>(dt_ns);
  s.threads.push_back({1, 1, "MainThread"});
  s.frames.push_back({"<module>", "train.py", 200});
  s.frames.push_back({"forward", "/usr/lib/python3/site-packages/torch/nn/module.py", 10});
  std::map<int, int32_t> stack_of_line;
  auto stack_for = [&](int line) {
    if (auto it = stack_of_line.find(line); it != stack_of_line.end()) return it->second;
    s.frames.push_back({"main", "train.py", line});
    s.stacks.push_back({1, static_cast<int32_t>(s.frames.size() - 1), 0});
    return stack_of_line[line] = static_cast<int32_t>(s.stacks.size() - 1);
  };
  // The program's own timeline: (start, line).
  std::vector<std::pair<int64_t, int>> tl;
  int64_t t = 0;
  for (int i = 0; i < iterations; ++i) {
    for (const auto& [line, dur] : lines) {
      tl.push_back({t, line});
      t += dur;
      if (wait_every > 0 && i % wait_every == wait_every - 1 && line == lines.front().first) t += wait_ns;
    }
    if (every > 0 && i % every == every - 1) {
      tl.push_back({t, 90});
      t += extra_ns;
    }
  }
  // Sampled every dt (with a little jitter), equal consecutive samples merged.
  size_t k = 0;
  for (int64_t ts = 1000, n = 0; ts < t; ts += dt_ns + (n++ % 3) * 1000) {
    while (k + 1 < tl.size() && tl[k + 1].first <= ts) ++k;
    const int32_t st = stack_for(tl[k].second);
    if (!s.segments.empty() && s.segments.back().stack == st) {
      s.segments.back().end_ns = ts + dt_ns;
    } else {
      s.segments.push_back({0, st, ts, ts + dt_ns});
    }
  }
  return s;
}

constexpr int64_t kMs = 1'000'000;

TEST(LoopSteps, CountsIterationsOfTheLoopFrame) {
  // 20 ms: batch 2 ms, forward 6, backward 10, step 2; sampled every 2 ms.
  const auto s = loop({{10, 2 * kMs}, {11, 6 * kMs}, {12, 10 * kMs}, {13, 2 * kMs}}, 200, 2 * kMs);
  const LoopSteps l = find_loop_steps(s);
  ASSERT_TRUE(l.found) << l.why_not;
  EXPECT_EQ(l.file, "train.py");
  EXPECT_EQ(l.function, "main");
  EXPECT_NEAR(l.step_ns / 1e6, 20.0, 0.2);
  EXPECT_GE(l.steps, 190);
  EXPECT_TRUE(l.sure());
  EXPECT_NE(loop_steps_source(l).find("train.py main()"), std::string::npos);
}

TEST(LoopSteps, EvaluationIntervalsAreLeftOut) {
  const auto s = loop({{10, 3 * kMs}, {12, 12 * kMs}, {13, 5 * kMs}}, 200, 2 * kMs, 20, 300 * kMs);
  const LoopSteps l = find_loop_steps(s);
  ASSERT_TRUE(l.found);
  EXPECT_NEAR(l.step_ns / 1e6, 20.0, 0.3);
  EXPECT_GE(l.other, 8);
}

TEST(LoopSteps, MissedWrapsCountTwice) {
  // backward is 70% of a 10 ms step, sampled every 4 ms: many wraps fall inside it.
  const auto s = loop({{10, 1 * kMs}, {11, 2 * kMs}, {12, 7 * kMs}}, 400, 4 * kMs);
  const LoopSteps l = find_loop_steps(s);
  ASSERT_TRUE(l.found);
  EXPECT_NEAR(l.step_ns / 1e6, 10.0, 0.5) << loop_steps_source(l);
  // Their extra time is in backward, not at the header: no iteration waited.
  EXPECT_EQ(l.waited, 0);
}

TEST(LoopSteps, AStepThatWaitedForItsBatchIsOneStep) {
  // 25 ms steps; every third waits 55 ms more at the `for` line (80 ms): the loader keeps up
  // only some of the time. Those are single iterations, not three each.
  const auto s = loop({{10, 2 * kMs}, {11, 8 * kMs}, {12, 12 * kMs}, {13, 3 * kMs}}, 150, 2 * kMs, 0, 0, 3, 55 * kMs);
  const LoopSteps l = find_loop_steps(s);
  ASSERT_TRUE(l.found) << l.why_not;
  EXPECT_GE(l.steps, 140);
  EXPECT_LE(l.steps, 150);
  EXPECT_GE(l.waited, 45);
  EXPECT_NEAR(l.median_ns() / 1e6, 25.0, 2.0);  // one sampling interval
  EXPECT_NEAR(l.step_ns / 1e6, (2 * 25.0 + 80.0) / 3, 1.5);
  // One period explains the others: the count is sure.
  EXPECT_TRUE(l.sure()) << loop_steps_source(l);
}

TEST(LoopSteps, AStackCutShortBreaksNoWrap) {
  // py-spy could not unwind every seventh sample past the library frame: no `<module>`
  // and no main() in it. It says nothing about the loop.
  samples::PyStacks s = loop({{10, 2 * kMs}, {11, 6 * kMs}, {12, 10 * kMs}, {13, 2 * kMs}}, 200, 2 * kMs);
  const LoopSteps whole = find_loop_steps(s);
  s.stacks.push_back({1});
  const auto cut = static_cast<int32_t>(s.stacks.size() - 1);
  for (size_t i = 3; i < s.segments.size(); i += 7) s.segments[i].stack = cut;
  const LoopSteps l = find_loop_steps(s);
  ASSERT_TRUE(l.found);
  EXPECT_NEAR(l.step_ns / 1e6, 20.0, 0.3);
  EXPECT_GE(l.steps, whole.steps - 2);
  EXPECT_LE(l.other, whole.other + 2);
}

TEST(LoopSteps, LeavingTheLoopsFunctionIsNoIteration) {
  // Every 20th iteration main() returns and evaluate() runs for 25 ms at module level
  // before the loop goes on: the interval around it (45 ms, near two steps) is no step.
  samples::PyStacks s = loop({{10, 3 * kMs}, {12, 12 * kMs}, {13, 5 * kMs}}, 200, 2 * kMs, 20, 25 * kMs);
  s.frames.push_back({"evaluate", "train.py", 300});
  s.stacks.push_back({static_cast<int32_t>(s.frames.size() - 1), 0});
  const auto eval = static_cast<int32_t>(s.stacks.size() - 1);
  for (auto& g : s.segments) {
    if (s.frames[s.stacks[g.stack][1]].line == 90) g.stack = eval;
  }
  const LoopSteps l = find_loop_steps(s);
  ASSERT_TRUE(l.found);
  EXPECT_NEAR(l.step_ns / 1e6, 20.0, 0.3);
  EXPECT_GE(l.other, 8);
  EXPECT_LE(l.steps, 200 - 8);
}

TEST(LoopSteps, SamplingSlowerThanTheStepIsNotSure) {
  // 7 ms steps sampled every 5 ms.
  const auto s = loop({{10, 1 * kMs}, {11, 2 * kMs}, {12, 4 * kMs}}, 600, 5 * kMs);
  const LoopSteps l = find_loop_steps(s);
  // Sampled every 5 ms, the 7 ms loop seems to run backwards (each sample ~2 ms earlier in
  // the body than the last): no step is reported.
  EXPECT_FALSE(l.found && l.sure()) << l.step_ns / 1e6 << " ms";
  if (l.found) {
    EXPECT_TRUE(l.ambiguous);
  }
}

TEST(LoopSteps, NoLoopNoSteps) {
  samples::PyStacks s;
  s.threads.push_back({1, 1, "MainThread"});
  s.frames.push_back({"main", "train.py", 5});
  s.stacks.push_back({0});
  s.segments.push_back({0, 0, 0, 10 * kMs});
  const LoopSteps l = find_loop_steps(s);
  EXPECT_FALSE(l.found);
  EXPECT_FALSE(l.why_not.empty());
  EXPECT_FALSE(find_loop_steps(samples::PyStacks{}).found);
}

TEST(LoopSteps, BurstsPoolTheirIntervals) {
  const auto a = find_loop_steps(loop({{10, 4 * kMs}, {12, 16 * kMs}}, 100, 2 * kMs));
  const auto b = find_loop_steps(loop({{10, 4 * kMs}, {12, 16 * kMs}}, 50, 2 * kMs));
  const LoopSteps c = combine_loop_steps({a, b, LoopSteps{}});
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.steps, a.steps + b.steps);
  EXPECT_NEAR(c.step_ns / 1e6, 20.0, 0.3);
  EXPECT_FALSE(combine_loop_steps({LoopSteps{}}).found);
}

TEST(LoopSteps, BurstsThatDisagreeSayTheStepDrifted) {
  // Two bursts of the same loop, 20 ms a step in the first and 28 ms in the second (a job
  // slower after its evaluation): the pooled mean holds both, and the source says so.
  const auto a = find_loop_steps(loop({{10, 4 * kMs}, {12, 16 * kMs}}, 60, 2 * kMs));
  const auto b = find_loop_steps(loop({{10, 4 * kMs}, {12, 24 * kMs}}, 60, 2 * kMs));
  const LoopSteps c = combine_loop_steps({a, b});
  ASSERT_EQ(c.part_step_ns.size(), 2u);
  EXPECT_NEAR(c.drift(), 1.4, 0.03);
  EXPECT_NE(loop_steps_source(c).find("the bursts' own means ran 20.0"), std::string::npos) << loop_steps_source(c);
  // Bursts that agree say nothing of it.
  const LoopSteps same = combine_loop_steps({a, find_loop_steps(loop({{10, 4 * kMs}, {12, 16 * kMs}}, 40, 2 * kMs))});
  EXPECT_LT(same.drift(), 1.02);
  EXPECT_EQ(loop_steps_source(same).find("drifted"), std::string::npos);
  // Nor does an ambiguous count: its bursts' means may be different fractions of the period.
  LoopSteps unsure = c;
  unsure.ambiguous = true;
  EXPECT_EQ(loop_steps_source(unsure).find("drifted"), std::string::npos) << loop_steps_source(unsure);
}

TEST(LoopSteps, TheMainThreadsLoopOverAMetricsThreads) {
  // A 20 ms training loop on the main thread, idle (unsampled) in backward half of each
  // step, beside a metrics thread that loops every 50 ms and is sampled throughout: it holds
  // more time in the job's frames, but the step is the main thread's (the GIL pair on the
  // H200 read a 20 ms metrics loop as the step of a 3 ms training loop).
  samples::PyStacks s = loop({{10, 2 * kMs}, {11, 6 * kMs}, {12, 10 * kMs}, {13, 2 * kMs}}, 200, 2 * kMs);
  std::erase_if(s.segments,
                [&](const samples::PyStackSegment& g) { return s.frames[s.stacks[g.stack][0]].line == 12; });
  const samples::PyStacks m = loop({{30, 20 * kMs}, {31, 30 * kMs}}, 80, 2 * kMs);
  const auto frames = static_cast<int32_t>(s.frames.size()), stacks = static_cast<int32_t>(s.stacks.size());
  for (samples::PyFrame f : m.frames) {
    if (f.function == "main") f.function = "metrics_loop";
    s.frames.push_back(f);
  }
  for (auto st : m.stacks) {
    for (auto& id : st) id += frames;
    s.stacks.push_back(st);
  }
  s.threads.push_back({1, 2, "Thread-1 (metrics_loop)"});
  for (auto g : m.segments) {
    g.thread = 1;
    g.stack += stacks;
    s.segments.push_back(g);
  }
  const LoopSteps l = find_loop_steps(s);
  ASSERT_TRUE(l.found) << l.why_not;
  EXPECT_EQ(l.function, "main");
  EXPECT_NEAR(l.step_ns / 1e6, 20.0, 0.3);
}

}  // namespace
}  // namespace chokepoint::analyses
