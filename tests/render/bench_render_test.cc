// The bench view (report/bench_render.h) of a profile judged by bench (bench/judge.h):
// a test of two layers, so it lives outside src/.
#include "report/bench_render.h"

#include <gtest/gtest.h>

#include "bench/judge.h"
#include "bench/testing/canned_profiles.h"
#include "rules/diagnose.h"

namespace chokepoint::report {
namespace {

machine::Profile canned() {
  auto p = machine::parse_profile(bench::testing::kH200Raw).value();
  p.gpus[0].find("d2h_pinned")->value = 20.0;  // one result below par, to see its cause
  bench::judge(p, rules::bench_causes);
  return p;
}

// The table row of a testcase (the line that starts with it).
std::string row(const std::string& text, const std::string& key) {
  const auto at = text.find("\n  " + key + " ");
  if (at == std::string::npos) return {};
  const auto end = text.find('\n', at + 1);
  return text.substr(at + 1, end - at - 1);
}

TEST(TextRender, HeaderAndTable) {
  const std::string t = render_bench_text(canned());
  EXPECT_NE(t.find("chokepoint bench: full run, 24.7 s; CUDA driver 13.0, runtime 13.0, cuBLASLt 13.0.1"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("GPU 0  NVIDIA H200  (cc 9.0, 132 SMs, 140 GiB, L2 60 MiB"), std::string::npos) << t;
  EXPECT_NE(t.find("compared with the published figures of H200 SXM"), std::string::npos);
  EXPECT_NE(t.find("testcase"), std::string::npos);
  const std::string h2d = row(t, "h2d_pinned");
  EXPECT_NE(h2d.find("53.1 GB/s"), std::string::npos) << h2d;
  EXPECT_NE(h2d.find("63.0 GB/s"), std::string::npos) << h2d;
  EXPECT_NE(h2d.find("84%"), std::string::npos) << h2d;
  EXPECT_NE(h2d.find("ok"), std::string::npos) << h2d;
  EXPECT_NE(row(t, "gemm_bf16").find("790 TFLOP/s"), std::string::npos);
  EXPECT_NE(row(t, "launch_latency").find("4.90 us"), std::string::npos) << row(t, "launch_latency");
}

TEST(TextRender, BelowParShowsThresholdAndCause) {
  const std::string t = render_bench_text(canned());
  const std::string d2h = row(t, "d2h_pinned");
  EXPECT_NE(d2h.find("BELOW PAR (<75%)"), std::string::npos) << d2h;
  const auto after = t.find(d2h) + d2h.size() + 1;
  EXPECT_EQ(t.substr(after, 6), "      ");  // the cause, indented under the row
  EXPECT_NE(t.find("PCIe switch", after), std::string::npos);
  EXPECT_EQ(t.find("[", after), std::string::npos) << "a generic cause names no rule";
}

TEST(TextRender, ACauseNamesItsRules) {
  machine::Profile p = canned();
  p.gpus[0].pcie_speed_under_load = "16.0 GT/s PCIe";
  p.gpus[0].pcie_speed_max = "32.0 GT/s PCIe";
  bench::judge(p, rules::bench_causes);
  const std::string t = render_bench_text(p);
  EXPECT_NE(t.find("[pcie-link-degraded]"), std::string::npos) << t;
}

TEST(TextRender, WaivedFailedAndSummary) {
  const std::string t = render_bench_text(canned());
  EXPECT_NE(row(t, "gemm_fp8").find("waived"), std::string::npos);
  EXPECT_NE(t.find("no fp8 algorithm"), std::string::npos);
  EXPECT_NE(row(t, "gemm_int8").find("FAILED"), std::string::npos);
  EXPECT_NE(t.find("Roofline ridge points"), std::string::npos);
  EXPECT_NE(t.find("bf16     186   (published 206)"), std::string::npos) << t;
  EXPECT_NE(t.find("14 ok, 1 below par, 0 above published, 3 info, 1 waived, 1 failed"), std::string::npos) << t;
}

TEST(TextRender, NoColourUnlessAsked) {
  EXPECT_EQ(render_bench_text(canned()).find("\033["), std::string::npos);
  RenderOptions o;
  o.color = true;
  EXPECT_NE(render_bench_text(canned(), o).find("\033[31;1mBELOW PAR"), std::string::npos);
}

TEST(TextRender, WrapsLongCausesToWidth) {
  RenderOptions o;
  o.width = 60;
  const std::string t = render_bench_text(canned(), o);
  size_t start = 0;
  while (start < t.size()) {
    const size_t end = t.find('\n', start);
    const std::string line = t.substr(start, end - start);
    if (line.rfind("      ", 0) == 0) {  // wrapped cause lines
      EXPECT_LE(line.size(), 60u) << line;
    }
    start = end + 1;
  }
}

TEST(TextRender, NotesOnRequest) {
  RenderOptions o;
  o.notes = true;
  EXPECT_NE(render_bench_text(canned(), o).find("(algo 66)"), std::string::npos);
  EXPECT_EQ(render_bench_text(canned()).find("(algo 66)"), std::string::npos);
}

TEST(TextRender, ErrorProfile) {
  machine::Profile p;
  p.error = "no usable GPU: no CUDA device is visible";
  EXPECT_NE(render_bench_text(p).find("error: no usable GPU"), std::string::npos);
}

TEST(FormatValue, ThreeSignificantDigits) {
  EXPECT_EQ(format_measured(2124.4, "GB/s"), "2124 GB/s");
  EXPECT_EQ(format_measured(53.14, "GB/s"), "53.1 GB/s");
  EXPECT_EQ(format_measured(4.9, "us"), "4.90 us");
  EXPECT_EQ(format_measured(0.503, "us"), "0.503 us");
  EXPECT_EQ(format_measured(0, ""), "0");
}

}  // namespace
}  // namespace chokepoint::report
