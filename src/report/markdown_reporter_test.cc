#include "report/markdown_reporter.h"

#include <sstream>

#include <gtest/gtest.h>

#include "report/testing_report.h"

namespace chokepoint::report {
namespace {

std::string render(const Report& r) {
  std::ostringstream out;
  RenderOptions o;
  o.timings = true;  // the tests see the footer's timing; analyze shows it with --timings
  EXPECT_TRUE(MarkdownReporter().write(r, out, o).ok());
  return out.str();
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(MarkdownReporter, HasHeadingsVerdictAndTables) {
  const std::string md = render(testing::input_bound_report());
  EXPECT_TRUE(md.starts_with("# chokepoint report\n")) << md;
  EXPECT_TRUE(contains(md, "**Bound by: input (data loading)** — confidence 0.93")) << md;
  EXPECT_TRUE(contains(md, "| Time | % of step | ms / step |\n|---|---:|---:|\n")) << md;
  EXPECT_TRUE(contains(md, "| **GPU idle** | 75.9% | 313.0 |")) << md;
  EXPECT_TRUE(contains(md, "| idle: launch overhead | 7.9% | 32.6 |")) << md;
  EXPECT_TRUE(contains(md, "| # | Kernel | Class | Precision | Tensor cores | Calls | Total ms |")) << md;
  EXPECT_TRUE(contains(md, "| Evidence | Value | Threshold |\n|---|---:|---:|\n")) << md;
}

TEST(MarkdownReporter, ListsFindingsInRankOrder) {
  const std::string md = render(testing::input_bound_report());
  const size_t first = md.find("### 1. `input-pipeline-stall` — The GPU waits");
  const size_t second = md.find("### 2. `host-sync` — ");
  ASSERT_NE(first, std::string::npos) << md;
  ASSERT_NE(second, std::string::npos) << md;
  EXPECT_LT(first, second);
  EXPECT_TRUE(contains(md, "est. **2.7x** with `dataloader-workers`")) << md;
  EXPECT_TRUE(contains(md, "## What to change")) << md;
  EXPECT_TRUE(contains(md, "| 1 | **Load batches in DataLoader workers**: ")) << md;
  EXPECT_TRUE(contains(md, "speedup not estimated · 3.1% of step time")) << md;
  EXPECT_TRUE(contains(md, "| achieved copy rate | n/a |  |")) << md;
  EXPECT_TRUE(contains(md, "**Fix:** Load batches in parallel")) << md;
}

TEST(MarkdownReporter, EscapesProseButNotCodeSpans) {
  const std::string md = render(testing::input_bound_report());
  // Code spans stay literal...
  EXPECT_TRUE(contains(md, "`.item()` forces")) << md;
  EXPECT_TRUE(contains(md, "`running_loss += loss.detach()`")) << md;
  // ...while '<' in prose would open an HTML tag.
  EXPECT_TRUE(contains(md, "std::vector&lt;float> | copies")) << md;
  EXPECT_TRUE(contains(md, "DataLoader.\\_\\_next\\_\\_ with")) << md;
  EXPECT_TRUE(contains(md, "`at::native::vectorized_elementwise_kernel<CUDAFunctor_add>`")) << md;
}

TEST(MarkdownReporter, ImportWarningsAndFooter) {
  const std::string md = render(testing::input_bound_report());
  EXPECT_TRUE(contains(md, "## Import warnings\n")) << md;
  EXPECT_TRUE(contains(md, "`kineto_truncated` (warning, x1): The trace ended")) << md;
  EXPECT_TRUE(contains(md, "_chokepoint 0.1.0 · analysis took 1.42 s_")) << md;
}

TEST(MarkdownReporter, PipesInTableCellsAreEscaped) {
  Report r = testing::input_bound_report();
  r.top_kernels[0].name = "kernel_a|b";
  r.findings[0].evidence[0].metric = "x|y";
  const std::string md = render(r);
  EXPECT_TRUE(contains(md, "`kernel_a\\|b`")) << md;
  EXPECT_TRUE(contains(md, "| x\\|y |")) << md;
}

}  // namespace
}  // namespace chokepoint::report

namespace chokepoint::report {
namespace {

// The host hot spots table: one row per line of the job's code, names from the job (a file
// name with a pipe, a line with an escape) kept inside their cells and made inert.
TEST(MarkdownReporter, HostHotspotsTable) {
  Report r = testing::input_bound_report();
  analyses::HostAttribution h;
  h.method = "trace";
  h.thread = "MainThread of pid 7";
  h.window_s = 1.0;
  h.gpu_idle_s = 0.5;
  h.covered_idle_s = 0.5;
  analyses::HotSpot s;
  s.frame = {"get_batch", "data|prep.py", 12};
  s.text = "x = load()\x1b[2J";
  s.cls = analyses::HostClass::kData;
  s.idle_s = 0.4;
  // A line that runs itself (an EMA loop: no GPU idle charged to it) comes after the idle
  // ones, with its own time per step.
  analyses::HotSpot ema;
  ema.frame = {"main", "train.py", 325};
  ema.text = "ema_p.mul_(d)";
  ema.cls = analyses::HostClass::kOther;
  ema.on_thread_s = 0.03;
  ema.own_on_thread_s = 0.03;
  h.spots = {s, ema};
  r.host = h;
  r.host_steps = 10;
  std::ostringstream out;
  ASSERT_TRUE(MarkdownReporter().write(r, out, {}).ok());
  const std::string md = out.str();
  EXPECT_NE(md.find("## Where the GPU waits (Python stacks)"), std::string::npos) << md;
  EXPECT_NE(md.find("| `data\\|prep.py:12` | `get_batch` | data loading | 40 ms/step |  | `x = load()\\x1b[2J` |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `train.py:325` | `main` | other | 0 ms/step | 3 ms/step | `ema_p.mul_(d)` |"), std::string::npos)
      << md;
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace chokepoint::report
