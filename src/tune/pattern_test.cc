#include "tune/pattern.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace chokepoint::tune {
namespace {

TEST(TunePattern, GroupOneElseTheWholeMatch) {
  const Pattern p = Pattern::compile("samples/s: ([0-9.]+)").value();
  EXPECT_EQ(p.find("epoch 3 samples/s: 1234.5 loss 0.2"), "1234.5");
  EXPECT_EQ(p.find("no number here"), std::nullopt);
  const Pattern whole = Pattern::compile("[0-9]+ tok/s").value();
  EXPECT_EQ(whole.find("at 880 tok/s"), "880 tok/s");
  // An optional group that did not take part: the whole match.
  const Pattern opt = Pattern::compile("x(y)?z").value();
  EXPECT_EQ(opt.find("axzb"), "xz");
}

// Issue 47: patterns that backtrack for ever under std::regex, on lines that make them.
TEST(TunePattern, HostilePatternsAndLinesTakeLinearTime) {
  const auto t0 = std::chrono::steady_clock::now();
  const Pattern nested = Pattern::compile("(a+)+$").value();
  EXPECT_EQ(nested.find(std::string(100000, 'a') + "!"), std::nullopt);
  const Pattern greedy = Pattern::compile(".*samples/s: ([0-9.]+)").value();
  EXPECT_EQ(greedy.find(std::string(200000, 'x') + " samples/s: 12.5"), "12.5");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
}

TEST(TunePattern, WhatRe2CannotTakeIsAUsageError) {
  const Result<Pattern> back = Pattern::compile("(a)\\1");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), ErrorCode::kUsage);
  EXPECT_NE(back.status().message().find("is not a regular expression"), std::string::npos);
  EXPECT_FALSE(Pattern::compile("([0-9]+").ok());
}

}  // namespace
}  // namespace chokepoint::tune
