#include "pipeline/burst_steps.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "samples/recording_reader.h"

namespace chokepoint::pipeline {
namespace {

namespace fs = std::filesystem;

const std::string kUnet = fs::path(CHOKEPOINT_TEST_DATA) / "programs/recorded/unet.run/rec";

// The bursts that recording's meta.json lists (none when it cannot be read).
std::vector<samples::StackBurst> unet_bursts() {
  auto rec = samples::read_recording(kUnet);
  EXPECT_TRUE(rec.ok()) << rec.status().message();
  return rec.ok() ? rec.value().meta.stacks.bursts : std::vector<samples::StackBurst>{};
}

// unet_diffusion under plain `run` on the H200 (tests/data/programs/recorded/unet.run): its
// first backward ran 17 s (cuDNN autotuning) before 6.5 s of training at ~63 ms a step.
// The bursts read one by one, as `run` reads them after each one ends.
TEST(BurstLoopReader, ReadsTheBurstsOfARunAsTheyCome) {
  const std::vector<samples::StackBurst> all = unet_bursts();
  ASSERT_EQ(all.size(), 7u);
  BurstLoopReader reader;
  std::vector<samples::StackBurst> so_far;
  for (size_t i = 0; i < all.size(); ++i) {
    so_far.push_back(all[i]);
    const BurstLoop l = reader.read(kUnet, so_far);
    if (i + 1 < all.size()) {
      // Building the model (burst 1), then standing in that backward (2-6): no loop, so
      // none of them counts and the next comes early.
      EXPECT_FALSE(l.loop_in_last) << "burst " << i + 1;
      EXPECT_FALSE(l.sure) << "burst " << i + 1;
    } else {
      // Training's first 2 s: main()'s loop, 26 steps counted (mean 60.71 ms; the program
      // printed a median of 63.17 ms over its 90 steps after the first 10, in 58-63 ms
      // windows then). 21 steps at 58.23 ms while stacks py-spy cut short broke wraps.
      EXPECT_TRUE(l.loop_in_last);
      EXPECT_TRUE(l.sure);
      EXPECT_EQ(l.steps.function, "main");
      EXPECT_EQ(l.steps.steps, 26);
      EXPECT_NEAR(l.steps.step_ns / 1e6, 60.71, 0.01);
    }
  }
}

// A burst too large to read while the job runs (or gone) shows no loop; the others still count.
TEST(BurstLoopReader, ABurstTooLargeOrMissingShowsNoLoop) {
  const std::vector<samples::StackBurst> all = unet_bursts();
  ASSERT_EQ(all.size(), 7u);
  // Burst 7 is 29 KB gzipped: read under a 64 KB cap, not under a 16 KB one.
  EXPECT_TRUE(BurstLoopReader(64 << 10).read(kUnet, all).loop_in_last);
  const BurstLoop capped = BurstLoopReader(16 << 10).read(kUnet, all);
  EXPECT_FALSE(capped.loop_in_last);
  EXPECT_FALSE(capped.steps.found);
  auto missing = all;
  missing.push_back({"pyspy-burst-8.json", all.back().origin_ns + 4'000'000'000, 500});
  const BurstLoop l = BurstLoopReader().read(kUnet, missing);
  EXPECT_FALSE(l.loop_in_last);
  EXPECT_TRUE(l.sure) << "the seventh still counts 21 steps";
}

}  // namespace
}  // namespace chokepoint::pipeline
