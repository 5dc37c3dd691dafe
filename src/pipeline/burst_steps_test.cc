#include "pipeline/burst_steps.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "samples/recording_reader.h"

namespace chokepoint::pipeline {
namespace {

namespace fs = std::filesystem;

// unet_diffusion under plain `run` on the H200 (tests/data/programs/recorded/unet.run): its
// first backward ran 17 s (cuDNN autotuning) before 6.5 s of training at ~63 ms a step.
// The bursts read one by one, as `run` reads them after each one ends.
TEST(BurstLoopReader, ReadsTheBurstsOfARunAsTheyCome) {
  const std::string dir = fs::path(CHOKEPOINT_TEST_DATA) / "programs/recorded/unet.run/rec";
  auto rec = samples::read_recording(dir);
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  const auto& all = rec.value().meta.stacks.bursts;
  ASSERT_EQ(all.size(), 7u);
  BurstLoopReader reader;
  std::vector<samples::StackBurst> so_far;
  for (size_t i = 0; i < all.size(); ++i) {
    so_far.push_back(all[i]);
    const BurstLoop l = reader.read(dir, so_far);
    if (i + 1 < all.size()) {
      // Building the model (burst 1), then standing in that backward (2-6): no loop, so
      // none of them counts and the next comes early.
      EXPECT_FALSE(l.loop_in_last) << "burst " << i + 1;
      EXPECT_FALSE(l.sure) << "burst " << i + 1;
    } else {
      // Training's first 2 s: main()'s loop, 21 steps counted (mean 58.23 ms; the program
      // printed a median of 63.17 ms over its 90 steps after the first 10).
      EXPECT_TRUE(l.loop_in_last);
      EXPECT_TRUE(l.sure);
      EXPECT_EQ(l.steps.function, "main");
      EXPECT_EQ(l.steps.steps, 21);
      EXPECT_NEAR(l.steps.step_ns / 1e6, 58.23, 0.01);
    }
  }
}

}  // namespace
}  // namespace chokepoint::pipeline
