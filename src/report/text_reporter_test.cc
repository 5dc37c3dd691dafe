#include "report/text_reporter.h"

#include <sstream>

#include <gtest/gtest.h>

#include "report/testing_report.h"
#include "report/text_layout.h"

namespace chokepoint::report {
namespace {

std::string render(const Report& r, bool color = false, int width = 100) {
  std::ostringstream out;
  RenderOptions o{color, width};
  o.timings = true;  // the tests see the timing line; analyze shows it with --timings
  EXPECT_TRUE(TextReporter().write(r, out, o).ok());
  return out.str();
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(TextReporter, LeadsWithTheVerdict) {
  const std::string text = render(testing::input_bound_report());
  EXPECT_TRUE(contains(text, "Bound by: input (data loading) — confidence 0.93\n")) << text;
  EXPECT_TRUE(contains(text, "The GPU sits idle 63% of every step")) << text;
  // The verdict comes before the breakdown and the findings.
  EXPECT_LT(text.find("Bound by:"), text.find("Where the step time goes"));
  EXPECT_LT(text.find("Where the step time goes"), text.find("Findings (2"));
}

TEST(TextReporter, HeaderNamesInputDeviceAndStepTimes) {
  const std::string text = render(testing::input_bound_report());
  EXPECT_TRUE(contains(text, "input_bound.json.gz · kineto · 12.3 MiB · 184,220 events")) << text;
  EXPECT_TRUE(contains(text, "NVIDIA H200 · 132 SMs · 140.4 GiB · compute 9.0")) << text;
  EXPECT_TRUE(contains(text, "  steps     8 (ProfilerStep#N annotations)\n")) << text;
  EXPECT_TRUE(contains(text, "  step time mean 412.3 ms · p50 405.1 ms · p95 470.2 ms\n")) << text;
}

TEST(TextReporter, RanksFindingsWithSpeedupEvidenceAndFix) {
  const std::string text = render(testing::input_bound_report());
  EXPECT_TRUE(contains(text, " 1. [CRITICAL] input-pipeline-stall — The GPU waits")) << text;
  EXPECT_TRUE(contains(text, " 2. [WARNING] host-sync — ")) << text;
  EXPECT_TRUE(contains(text, "-> est. 2.7x with dataloader-workers · 63.0% of step time")) << text;
  EXPECT_TRUE(contains(text, "-> speedup not estimated · 3.1% of step time")) << text;
  // Metrics padded to the longest, values right-aligned, thresholds in the same unit with
  // the side that makes the finding fire.
  EXPECT_TRUE(contains(text, "      gpu idle waiting for input     63.0%   fires ≥ 10.0%\n")) << text;
  EXPECT_TRUE(contains(text, "      dataloader wait per step    259.7 ms\n")) << text;
  EXPECT_TRUE(contains(text, "      sync wait per step  12.8 ms   fires ≥ 5 ms\n")) << text;
  EXPECT_TRUE(contains(text, "      achieved copy rate      n/a\n")) << text;  // the NaN
  EXPECT_TRUE(contains(text, "fix: Load batches in parallel")) << text;
}

TEST(TextReporter, ShowsBreakdownBarsAndImportWarnings) {
  const std::string text = render(testing::input_bound_report());
  EXPECT_TRUE(contains(text, "GPU idle")) << text;
  EXPECT_TRUE(contains(text, "launch overhead")) << text;
  EXPECT_TRUE(contains(text, "█")) << text;
  EXPECT_TRUE(contains(text, "cost by category  input 63.0% · compute 14.2%")) << text;
  EXPECT_TRUE(contains(text, "warning kineto_truncated x1: The trace ended")) << text;
  EXPECT_TRUE(contains(text, "info kineto_unknown_category x37:")) << text;
  EXPECT_TRUE(contains(text, "analysis took 1.42 s")) << text;
}

TEST(TextReporter, ShortensLongKernelNamesToFit) {
  const std::string text = render(testing::input_bound_report());
  // The class column fits "normalization" (a 13-letter class overflowed into the next).
  EXPECT_TRUE(contains(text, "vectorized_elementwise_ke...<CUDAFunctor_add> elementwise   fp32")) << text;
  EXPECT_FALSE(contains(text, "at::detail::Array")) << text;
  EXPECT_TRUE(contains(text, "cutlass_80_simt_sgemm_128x64_8x5_nn_align1 ")) << text;
  EXPECT_TRUE(contains(text, "Memcpy HtoD (Pageable -> Device)")) << text;
  // A plain name too long for the column is cut, keeping its start.
  EXPECT_TRUE(contains(text, "  1. sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_til... gemm")) << text;
}

TEST(TextReporter, LeadsWithTheRemediesAndTheirEstimates) {
  const std::string text = render(testing::input_bound_report());
  EXPECT_TRUE(contains(text, "What to change\n  (first the largest gain that keeps the training as it is,")) << text;
  EXPECT_TRUE(contains(text, " 1. Load batches in DataLoader workers — est. 2.7x (replayed: 412.3 -> 151.9 ms"))
      << text;
  EXPECT_TRUE(contains(text, "    removes: input-pipeline-stall\n")) << text;
  EXPECT_TRUE(contains(text, "(+1 more in --format json)")) << text;
  EXPECT_LT(text.find("What to change"), text.find("Findings ("));
}

TEST(TextReporter, EveryLineFitsTheWidth) {
  for (int width : {60, 80, 100, 140}) {
    std::istringstream lines(render(testing::input_bound_report(), false, width));
    std::string line;
    while (std::getline(lines, line)) {
      EXPECT_LE(display_width(line), static_cast<size_t>(width)) << "width " << width << ": " << line;
    }
  }
}

TEST(TextReporter, NoEscapeCodesWithoutColour) {
  EXPECT_FALSE(contains(render(testing::input_bound_report(), false), "\x1b"));
}

TEST(TextReporter, ColoursSeverityAndVerdictWhenAsked) {
  const std::string text = render(testing::input_bound_report(), true);
  EXPECT_TRUE(contains(text, "\x1b[1mBound by: input (data loading)")) << text;
  EXPECT_TRUE(contains(text, "\x1b[1;31m[CRITICAL]\x1b[0m")) << text;
  EXPECT_TRUE(contains(text, "\x1b[33m[WARNING]\x1b[0m")) << text;
}

TEST(TextReporter, EmptyReportStillRenders) {
  const std::string text = render(Report{});
  EXPECT_TRUE(contains(text, "Bound by: unknown — confidence 0.00")) << text;
  EXPECT_TRUE(contains(text, "unknown (the input names no GPU)")) << text;
  EXPECT_TRUE(contains(text, "Findings: none")) << text;
  EXPECT_FALSE(contains(text, "Top kernels")) << text;
  EXPECT_FALSE(contains(text, "Import warnings")) << text;
}

}  // namespace
}  // namespace chokepoint::report
