#include "report/html_reporter.h"

#include <sstream>

#include <gtest/gtest.h>

#include "report/testing_report.h"

namespace chokepoint::report {
namespace {

std::string render(const Report& r) {
  std::ostringstream out;
  EXPECT_TRUE(HtmlReporter().write(r, out, RenderOptions{}).ok());
  return out.str();
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlReporter, VerdictAndFirstRemedyComeFirst) {
  const std::string page = render(testing::input_bound_report());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  const size_t verdict = page.find("id=\"verdict\"");
  const size_t remedy = page.find("id=\"first-remedy\"");
  const size_t findings = page.find("id=\"findings\"");
  ASSERT_NE(verdict, std::string::npos);
  ASSERT_NE(remedy, std::string::npos);
  EXPECT_LT(verdict, remedy);
  EXPECT_LT(remedy, findings);
  EXPECT_NE(page.find("Bound by: input (data loading)"), std::string::npos);
  EXPECT_NE(page.find("Load batches in DataLoader workers"), std::string::npos);
  EXPECT_NE(page.find("2.7x"), std::string::npos);  // the remedy's estimate
  // Where the step goes: one rect per kernel class and idle cause of the mean step.
  EXPECT_NE(page.find("idle:input 259.70 ms"), std::string::npos);
  EXPECT_NE(page.find("id=\"kernels\""), std::string::npos);
  EXPECT_NE(page.find("kineto_truncated"), std::string::npos);  // import warnings
}

// The same input gives the same page: how long the analysis took only with --timings.
TEST(HtmlReporter, SameInputSamePage) {
  Report a = testing::input_bound_report(), b = a;
  a.analysis_seconds = 0.05;
  b.analysis_seconds = 0.04;
  EXPECT_EQ(render(a), render(b));
  EXPECT_EQ(render(a).find("analyzed in"), std::string::npos);
  RenderOptions timed;
  timed.timings = true;
  std::ostringstream out;
  ASSERT_TRUE(HtmlReporter().write(a, out, timed).ok());
  EXPECT_NE(out.str().find("analyzed in 0.05 s"), std::string::npos);
}

// Self-contained: nothing is fetched, and the page forbids fetching anything.
TEST(HtmlReporter, NothingLeavesTheFile) {
  const std::string page = render(testing::input_bound_report());
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  // The only links jump inside the page, each to a section that is there.
  for (size_t at = page.find(" href=\""); at != std::string::npos; at = page.find(" href=\"", at + 1)) {
    ASSERT_EQ(page.compare(at + 7, 1, "#"), 0) << page.substr(at, 40);
    const std::string id = page.substr(at + 8, page.find('"', at + 8) - at - 8);
    EXPECT_NE(page.find("id=\"" + id + "\""), std::string::npos) << id;
  }
  EXPECT_NE(page.find("<a href=\"#findings\">Findings</a>"), std::string::npos);
  EXPECT_NE(page.find("prefers-color-scheme:dark"), std::string::npos);
  EXPECT_NE(page.find("@media print"), std::string::npos);
}

TEST(HtmlReporter, StepBarsAndRoofline) {
  Report r = testing::input_bound_report();
  r.window.step_ms = {405.1, 398.7, 481.9, 410.0, 404.2, 412.3, 470.2, 416.4};
  r.roofline.push_back({"gemm", 3, 50.0, 12.0, 100.0, 20.0, 900.0, 18.0, "memory"});
  const std::string page = render(r);
  EXPECT_NE(page.find("<title>step 4: 481.90 ms</title>"), std::string::npos);
  EXPECT_NE(page.find("class=\"roofline\""), std::string::npos);
  EXPECT_NE(page.find("gemm: 111 FLOP/B, 100 TFLOP/s"), std::string::npos);  // 100 TFLOP/s over 900 GB/s
}

// Names from a trace are text, never markup: a kernel named like a script tag, an
// attribute breakout and a control character all come out escaped.
TEST(HtmlReporter, HostileNamesAreEscaped) {
  Report r = testing::input_bound_report();
  const std::string evil = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>'\x1b]0;pwned\x07";
  r.top_kernels[0].name += evil;
  r.devices[0].name += evil;
  r.verdict.summary += evil;
  r.findings[0].detail += evil;
  r.inputs[0].path += evil;
  r.import_stats[0].description += evil;
  r.breakdown.busy_by_class[0].name += evil;
  const std::string page = render(r);
  EXPECT_EQ(count(page, "<script>alert"), 0u);
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_EQ(count(page, "<script>"), 1u);  // the page's own
  EXPECT_GE(count(page, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;&#39;"), 6u);
}

}  // namespace
}  // namespace chokepoint::report
