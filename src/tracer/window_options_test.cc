#include "tracer/window_options.h"

#include <gtest/gtest.h>

#include "tracer/window.h"

namespace chokepoint::tracer {
namespace {

std::string window(const WindowOptions& o) {
  auto w = window_from_options(o);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? w.value() : "";
}

std::string refusal(const WindowOptions& o) {
  auto w = window_from_options(o);
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), ErrorCode::kUsage);
  return w.status().message();
}

TEST(WindowOptions, EachKindOfWindowReadsBackAsTheTracerParsesIt) {
  EXPECT_EQ(window({}), "");
  EXPECT_EQ(window({.trace = "whole"}), "");
  for (const WindowOptions& o : {WindowOptions{.trace = "on-demand"}, WindowOptions{.steps = "100:20"},
                                 WindowOptions{.time = "60s:10s"}, WindowOptions{.steps = "5:2", .every = "10m"}}) {
    const std::string text = window(o);
    EXPECT_FALSE(text.empty());
    std::string error;
    EXPECT_TRUE(parse_window_spec(text, &error).has_value()) << text << ": " << error;
  }
  std::string error;
  const auto t = parse_window_spec(window({.time = "60s:10s"}), &error);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->at_ns, 60'000'000'000);
  EXPECT_EQ(t->for_ns, 10'000'000'000);
  const auto s = parse_window_spec(window({.steps = "5:2", .every = "10m"}), &error);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->warmup_steps, 5);
  EXPECT_EQ(s->steps, 2);
  EXPECT_EQ(s->every_ns, 600'000'000'000);
}

TEST(WindowOptions, EachMistakeIsSaidWithHowToWriteIt) {
  EXPECT_NE(refusal({.trace = "on-demand", .steps = "1:1"}).find("one window only"), std::string::npos);
  EXPECT_NE(refusal({.trace = "sometimes"}).find("--trace takes whole or on-demand"), std::string::npos);
  EXPECT_EQ(refusal({.first_word = "on-demand"}), "--trace takes its mode with '=': --trace=on-demand");
  EXPECT_NE(refusal({.time = "60s"}).find("is not START:LENGTH"), std::string::npos);
  EXPECT_NE(refusal({.steps = "100"}).find("is not WARMUP:COUNT"), std::string::npos);
  EXPECT_NE(refusal({.steps = "1:1", .every = "soon"}).find("is not a duration"), std::string::npos);
  EXPECT_NE(refusal({.trace = "on-demand", .every = "10m"}).find("repeats a --trace-steps or --trace-time"),
            std::string::npos);
}

}  // namespace
}  // namespace chokepoint::tracer
