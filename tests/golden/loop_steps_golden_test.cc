// Steps of the realistic training programs (tests/data/programs/) from Python stack
// samples alone, as plain `run` sees them: py-spy at 200 and 500 Hz over the whole run on
// the H200 (tests/data/programs/gpu_rates.sh ... steps; stacks/README.md). The median
// iteration counted in the samples must be within 5% of the median iteration time the
// program printed in the same run, and the mean within 5% of the mean of its printed
// iterations (those within twice the median: no warm-up, no evaluation).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "analyses/stacks/loop_steps.h"
#include "importers/pyspy/pyspy_reader.h"
#include "live/burst_schedule.h"

namespace chokepoint {
namespace {

const std::string kDir = std::string(CHOKEPOINT_TEST_DATA) + "/programs/stacks/";

struct Recorded {
  samples::PyStacks stacks;
  double printed_ms = 0;       // the median iteration the program printed
  double printed_mean_ms = 0;  // the mean of its iterations within twice that (no warm-up, no evaluation)
};

Recorded load(const std::string& name) {
  std::ifstream f(kDir + name + ".json");
  const auto j = nlohmann::json::parse(f);
  Recorded r;
  r.printed_ms = j.at("result").at("median_ms").get<double>();
  double sum = 0;
  int n = 0;
  for (const auto& v : j.at("result").at("iter_ms")) {
    if (const double ms = v.get<double>(); ms <= 2 * r.printed_ms) sum += ms, ++n;
  }
  r.printed_mean_ms = n > 0 ? sum / n : 0;
  auto st = importers::read_pyspy_chrometrace(kDir + name + ".pyspy.json.gz",
                                              j.at("stacks").at("origin_ns").get<int64_t>());
  EXPECT_TRUE(st.ok()) << st.status().message();
  if (st.ok()) r.stacks = std::move(st).value();
  r.stacks.rate_hz = j.at("stacks").at("rate_hz").get<double>();
  return r;
}

struct Case {
  const char* name;
  const char* loop_function;
};

class LoopStepsOfProgram : public ::testing::TestWithParam<Case> {};

TEST_P(LoopStepsOfProgram, MeanIterationMatchesThePrintedOne) {
  const Case c = GetParam();
  const Recorded r = load(c.name);
  const analyses::LoopSteps l = analyses::find_loop_steps(r.stacks);
  ASSERT_TRUE(l.found) << l.why_not;
  EXPECT_EQ(l.function, c.loop_function);
  EXPECT_TRUE(l.sure()) << l.samples_per_step;
  EXPECT_GE(l.steps, 30);
  const double ms = l.step_ns / 1e6;
  std::printf(
      "%s: %.2f ms counted, median %.2f (%lld steps, %lld waited, %lld left out, %.1f samples a step), printed %.2f, "
      "mean %.2f\n",
      c.name, ms, l.median_ns() / 1e6, static_cast<long long>(l.steps), static_cast<long long>(l.waited),
      static_cast<long long>(l.other), l.samples_per_step, r.printed_ms, r.printed_mean_ms);
  EXPECT_NEAR(ms, r.printed_mean_ms, 0.05 * r.printed_mean_ms)
      << c.name << ": counted " << ms << " ms, printed mean " << r.printed_mean_ms;
  EXPECT_NEAR(l.median_ns() / 1e6, r.printed_ms, 0.05 * r.printed_ms) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Programs, LoopStepsOfProgram,
                         ::testing::Values(Case{"gpt_500", "main"}, Case{"gptc_500", "main"},
                                           Case{"lstm_500", "main.<locals>.train"}, Case{"bert_200", "main"},
                                           Case{"bert_500", "main"}, Case{"unet_200", "main"}, Case{"unet_500", "main"},
                                           Case{"resnet_200", "train"}),
                         [](const auto& info) { return std::string(info.param.name); });

// lstm_lm's 7 ms iteration sampled every 5 ms: every other wrap is missed (a line as long
// as the interval hides it), so the intervals read twice the step (15.8 ms) and fall as
// often at one and a half of that as at whole ones. The count is found but not trusted.
TEST(LoopSteps, UndersampledLoopIsNotSure) {
  const Recorded r = load("lstm_200");
  const analyses::LoopSteps l = analyses::find_loop_steps(r.stacks);
  ASSERT_TRUE(l.found) << l.why_not;
  EXPECT_TRUE(l.ambiguous) << l.step_ns / 1e6 << " ms vs " << r.printed_ms;
  EXPECT_FALSE(l.sure());
  EXPECT_NE(analyses::loop_steps_source(l).find("the count is not sure"), std::string::npos)
      << analyses::loop_steps_source(l);
}

// `run` takes its Python stacks in 2 s bursts: a burst's count, when it is sure, must hold
// too. Every 2 s slice of the whole-run samples (500 Hz, and 200 Hz where a step holds over
// 8 samples: lstm at 200 Hz is the undersampled case above) that passes as sure is within
// 12% of the printed median (a slice is a moment of the run: its warm-up and drift
// against the whole run's median reach ~11% here); the slices that read 30-80% off
// (evaluation, warm-up, a loop caught mid-change) are not sure.
TEST(LoopStepsOfProgram, BurstSizedSlicesThatAreSureHold) {
  int sure = 0, slices = 0;
  for (const char* name :
       {"bert_200", "bert_500", "gpt_500", "gptc_500", "lstm_500", "resnet_200", "unet_200", "unet_500"}) {
    const Recorded r = load(name);
    int64_t t0 = INT64_MAX, t1 = 0;
    for (const auto& g : r.stacks.segments) {
      t0 = std::min(t0, g.start_ns);
      t1 = std::max(t1, g.end_ns);
    }
    constexpr int64_t kSlice = 2'000'000'000;
    for (int64_t s = t0; s + kSlice <= t1; s += kSlice) {
      samples::PyStacks sl = r.stacks;
      sl.segments.clear();
      for (const auto& g : r.stacks.segments) {
        if (g.start_ns >= s && g.end_ns <= s + kSlice) sl.segments.push_back(g);
      }
      const analyses::LoopSteps l = analyses::find_loop_steps(sl);
      if (!l.found) continue;
      ++slices;
      const double err = l.step_ns / 1e6 / r.printed_ms - 1;
      if (!l.sure()) continue;
      ++sure;
      EXPECT_LT(std::abs(err), 0.12) << name << " slice at " << (s - t0) / 1e9 << " s: " << l.step_ns / 1e6
                                     << " ms, printed " << r.printed_ms << "; " << analyses::loop_steps_source(l);
    }
  }
  std::printf("%d of %d slices with a loop are sure\n", sure, slices);
  EXPECT_GE(sure, 15);
}

}  // namespace
}  // namespace chokepoint

namespace chokepoint {
namespace {

// `run`'s burst schedule (live/burst_schedule.h) replayed on the whole runs above: for
// every first burst from 1 s into the samples on, one second apart (when the GPU got busy
// is not in these files), each 2 s burst is the slice of the whole run's samples it would
// have held, judged as `run` judges it (a loop in it; the bursts so far sure), until the
// run ends. Where the bursts end up sure, their mean is within 10% of the printed median (a
// 2 s moment of a job drifts: bert_finetune's 10-step windows ran 43-47 ms early in training
// and 33-39 ms later); and most first-burst times end up sure.
TEST(LoopStepsOfProgram, TheBurstScheduleReplayedOnWholeRuns) {
  constexpr int64_t kS = 1'000'000'000;
  int trials = 0, sure = 0;
  for (const char* name : {"bert_500", "gpt_500", "gptc_500", "lstm_500", "resnet_200", "unet_500"}) {
    const Recorded r = load(name);
    int64_t t0 = INT64_MAX, t1 = 0;
    for (const auto& g : r.stacks.segments) {
      t0 = std::min(t0, g.start_ns);
      t1 = std::max(t1, g.end_ns);
    }
    int program_sure = 0;
    std::string line;
    for (int64_t first = t0 + kS; first + live::BurstSchedule::kBurstNs <= t1; first += kS) {
      live::BurstSchedule s(0);
      std::vector<analyses::LoopSteps> parts;
      for (int64_t now = t0; now + live::BurstSchedule::kBurstNs <= t1; now += kS / 10) {
        if (!s.due(now - t0, true, now >= first - live::BurstSchedule::kGpuBusyFirstNs)) continue;
        s.started(now - t0);
        samples::PyStacks burst = r.stacks;
        burst.segments.clear();
        for (const auto& g : r.stacks.segments) {
          if (g.start_ns >= now && g.end_ns <= now + live::BurstSchedule::kBurstNs) burst.segments.push_back(g);
        }
        parts.push_back(analyses::find_loop_steps(burst));
        now += live::BurstSchedule::kBurstNs;
        const bool pooled_sure = analyses::combine_loop_steps(parts).sure();
        s.ended(now - t0, !parts.back().found ? live::BurstOutcome::kNoLoop
                          : pooled_sure       ? live::BurstOutcome::kLoopSure
                                              : live::BurstOutcome::kLoopUnsure);
        now -= kS / 10;  // the loop's step: the next tick is the one the burst ended on
      }
      ++trials;
      const analyses::LoopSteps pooled = analyses::combine_loop_steps(parts);
      if (!pooled.sure()) {
        line += " -";
        continue;
      }
      ++sure;
      ++program_sure;
      const double err = pooled.step_ns / 1e6 / r.printed_ms - 1;
      line += fmt::format(" {:+.0f}", 100 * err);
      EXPECT_LT(std::abs(err), 0.10) << name << ", first burst " << (first - t0) / 1e9
                                     << " s in: " << pooled.step_ns / 1e6 << " ms against " << r.printed_ms;
    }
    std::printf("%s, error %% by first burst (- not sure):%s\n", name, line.c_str());
    EXPECT_GE(program_sure, 1) << name;
  }
  std::printf("%d of %d replayed runs end sure\n", sure, trials);
  EXPECT_GE(sure, trials * 4 / 5);
}

}  // namespace
}  // namespace chokepoint
