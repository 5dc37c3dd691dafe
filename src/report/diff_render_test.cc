#include "report/diff_render.h"

#include <sstream>

#include <gtest/gtest.h>

#include "report/testing_report.h"

namespace chokepoint::report {
namespace {

const std::string kEvil = "<script>alert(1)</script>\x1b]0;pwned\x07|*_";

// A diff of the hand-made input-bound report against itself, with hostile paths, titles
// and names (they come from the input: a JSON report read back holds anything).
RunDiff hostile_diff() {
  RunDiff d;
  d.before = {"before" + kEvil + ".json", "report", testing::input_bound_report()};
  d.after = {"after" + kEvil + ".json", "trace", testing::input_bound_report()};
  d.step.steps_before = d.step.steps_after = 8;
  d.step.before = d.step.after = d.before.report.window.step_time_ms;
  d.step.speedup = 1.25;
  d.step.headline = 1.25;
  d.step.headline_source = "untraced";
  d.step.change_pct = -20;
  d.step.noise_method = "runs";
  d.step.p_value = 0.01;
  d.step.within_noise = false;
  d.step.noise_note = "Welch's t-test on 3 vs 3 runs (log step times): p = 0.01 < 0.05";
  d.findings.push_back({"host-sync", "title " + kEvil, "resolved", Severity::kWarning, Severity::kInfo});
  d.promises.push_back({"dataloader-workers", "Load batches", 2.7149, 1.25, "applied", false,
                        "before predicted 2.71x from dataloader-workers; measured 1.25x", std::nullopt});
  // An estimate from a whole-job CUPTI trace is a range (the tracer's cost per call).
  d.promises.push_back({"cuda-graphs", "Capture the step in CUDA Graphs", 14.69, std::nullopt, "not-applied", false,
                        "not applied: its findings are still present (predicted 11.61-14.69x)", 11.61});
  d.categories.push_back({"input" + kEvil, 259.7, 100.0, 63.0, 40.0});
  return d;
}

// Wide: a note the text view wraps would not be found whole.
std::string render(const RunDiff& d, const char* format) {
  std::ostringstream out;
  RenderOptions wide;
  wide.width = 200;
  EXPECT_TRUE(write_diff(d, format, out, wide).ok()) << format;
  return out.str();
}

TEST(DiffRender, EveryFormatShowsTheChangeAndThePromise) {
  const RunDiff d = hostile_diff();
  for (const char* format : {"text", "md", "json", "html"}) {
    const std::string s = render(d, format);
    EXPECT_NE(s.find("before predicted 2.71x from dataloader-workers; measured 1.25x"), std::string::npos) << format;
    EXPECT_EQ(s.find('\x1b'), std::string::npos) << format;
  }
  EXPECT_NE(render(d, "text").find("Step time  1.25x faster\n"), std::string::npos) << render(d, "text");
  const auto j = nlohmann::json::parse(render(d, "json"));
  EXPECT_EQ(j.at("schema"), "chokepoint.diff/1");
  EXPECT_EQ(j.at("step").at("speedup"), 1.25);
  EXPECT_EQ(j.at("step").at("within_noise"), false);
  EXPECT_EQ(j.at("findings").at(0).at("severity_after"), nullptr);  // resolved: nothing after
  EXPECT_EQ(j.at("promises").at(0).at("applied"), "applied");
  EXPECT_EQ(j.at("promises").at(0).at("predicted_speedup_range"), nullptr);
  EXPECT_EQ(j.at("promises").at(1).at("predicted_speedup_range"), nlohmann::json::array({11.61, 14.69}));
  EXPECT_NE(render(d, "md").find("| 11.6-14.7x |"), std::string::npos) << render(d, "md");
  EXPECT_EQ(write_diff(d, "pdf", std::cout, RenderOptions{}).code(), ErrorCode::kUsage);
}

TEST(DiffRender, NamesFromTheInputAreEscaped) {
  const RunDiff d = hostile_diff();
  const std::string html = render(d, "html");
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("before&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  const std::string md = render(d, "md");
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("&lt;script>alert(1)&lt;/script>"), std::string::npos);
  EXPECT_NE(md.find("\\|\\*\\_"), std::string::npos);  // a table cell stays one cell
}

}  // namespace
}  // namespace chokepoint::report
