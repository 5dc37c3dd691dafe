// Issue 13: every string of a report that can come from the input (kernel, device,
// process and file names, the command line, prose quoting them) reaches a terminal or a
// Markdown file with its control characters shown as escapes, in every human format.
#include <gtest/gtest.h>

#include <sstream>

#include "report/markdown_reporter.h"
#include "report/testing_report.h"
#include "report/text_reporter.h"

namespace chokepoint::report {
namespace {

// Window title, clipboard write, clear screen, a C1 CSI (UTF-8 and as a raw byte), a
// newline and a tab.
const std::string kEvil =
    "\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\x1b[2J\xc2\x9b"
    "2J\x9b\n\t|`";

void poison(std::string& s) { s += kEvil; }

// input_bound_report() with kEvil appended to every string, plus a live section.
Report hostile_report() {
  Report r = testing::input_bound_report();
  for (auto& in : r.inputs) poison(in.path), poison(in.format);
  for (auto& d : r.devices) poison(d.name), poison(d.compute_capability), poison(d.ceilings.source);
  poison(r.window.step_source);
  for (auto* shares : {&r.breakdown.idle_by_cause, &r.breakdown.busy_by_class, &r.breakdown.category_costs}) {
    for (auto& s : *shares) poison(s.name);
  }
  poison(r.verdict.summary);
  for (auto& f : r.findings) {
    poison(f.id), poison(f.title), poison(f.detail), poison(f.recommendation);
    for (auto& e : f.evidence) poison(e.metric), poison(e.unit);
    for (auto& id : f.remedies) poison(id);
  }
  for (auto* advice : {&r.remedies, &r.what_ifs}) {
    for (auto& a : *advice) {
      poison(a.id), poison(a.title), poison(a.change), poison(a.what_changes);
      for (auto& s : a.assumptions) poison(s);
      for (auto& s : a.findings) poison(s);
    }
  }
  rules::RemedyAdvice idle;
  idle.id = "tf32" + kEvil;
  idle.estimated_speedup = 1.01;
  r.what_ifs.push_back(idle);
  for (auto& k : r.top_kernels) poison(k.name), poison(k.kernel_class), poison(k.precision);
  r.roofline.push_back({"gemm" + kEvil, 3, 50.0, 12.0, 100.0, 20.0, 900.0, 18.0, "memory" + kEvil});
  r.mfu_pct = 12.5;
  r.mfu_precision = "bf16" + kEvil;
  r.replay = Replay{8, 412.0, 410.0, 300.0, "torch.profiler" + kEvil};
  for (auto& s : r.import_stats) poison(s.name), poison(s.description);
  return r;
}

Report hostile_live_report() {
  Report r = hostile_report();
  LiveSummary l;
  l.recording = "rec" + kEvil;
  l.command = {"python3", "train.py" + kEvil};
  l.gpu_note = "matched by" + kEvil;
  l.gpu_unavailable = "no driver" + kEvil;
  LiveGpu g;
  g.name = "NVIDIA H200" + kEvil;
  g.clock_reasons = {{"sw_power_cap" + kEvil, 0.5}};
  l.gpus.push_back(g);
  LiveProcess p;
  p.pid = 4242;
  p.comm = "python" + kEvil;
  p.role = "launched" + kEvil;
  l.top_processes.push_back(p);
  l.processes_seen = 1;
  r.live = l;
  return r;
}

// `out` without the SGR colour sequences the text reporter makes itself.
std::string without_sgr(const std::string& out) {
  std::string s;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\x1b' && i + 1 < out.size() && out[i + 1] == '[') {
      size_t j = i + 2;
      while (j < out.size() && (std::isdigit(static_cast<unsigned char>(out[j])) || out[j] == ';')) ++j;
      if (j < out.size() && out[j] == 'm') {
        i = j;
        continue;
      }
    }
    s += out[i];
  }
  return s;
}

// No C0 control but the newline, no DEL, no C1 (encoded or raw): every byte >= 0x80 is
// part of a valid multi-byte sequence whose code point is above U+009F.
void expect_printable(const std::string& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (c == '\n') continue;
    ASSERT_FALSE(c < 0x20 || c == 0x7f) << "control byte " << int(c) << " at " << i << ": " << out.substr(i, 40);
    if (c == 0xc2 && i + 1 < out.size()) {
      const auto d = static_cast<unsigned char>(out[i + 1]);
      ASSERT_FALSE(d >= 0x80 && d <= 0x9f) << "C1 control at " << i;
    }
    if (c >= 0x80 && c < 0xc0) {  // a continuation byte must follow a lead or another one
      ASSERT_GT(i, 0u);
      ASSERT_GE(static_cast<unsigned char>(out[i - 1]), 0x80) << "stray byte " << int(c) << " at " << i;
    }
  }
}

std::string render(const Reporter& reporter, const Report& r, bool color) {
  std::ostringstream out;
  RenderOptions o;
  o.color = color;
  o.width = 100;
  EXPECT_TRUE(reporter.write(r, out, o).ok());
  return out.str();
}

TEST(HostileNames, TextReportShowsControlCharactersAsEscapes) {
  for (const Report& r : {hostile_report(), hostile_live_report()}) {
    for (bool color : {false, true}) {
      const std::string out = render(TextReporter(), r, color);
      SCOPED_TRACE(color ? "colour" : "plain");
      expect_printable(color ? without_sgr(out) : out);
      EXPECT_NE(out.find("\\x1b]0;pwned\\x07\\x1b]52;c;aGk=\\x07\\x1b[2J\\u009b2J\\x9b\\x0a\\x09"), std::string::npos)
          << out;
    }
  }
}

TEST(HostileNames, MarkdownReportShowsControlCharactersAsEscapes) {
  for (const Report& r : {hostile_report(), hostile_live_report()}) {
    const std::string out = render(MarkdownReporter(), r, false);
    expect_printable(out);
    // Shown (in prose the escape's backslash is itself escaped for Markdown).
    EXPECT_NE(out.find("x1b]0;pwned\\x07"), std::string::npos) << out;
    EXPECT_NE(out.find("u009b2J"), std::string::npos) << out;
  }
}

TEST(HostileNames, CodeSpansSurviveBackticksInNames) {
  Report r = testing::input_bound_report();
  r.top_kernels[0].name = "a``b`c";
  const std::string out = render(MarkdownReporter(), r, false);
  EXPECT_NE(out.find("```a``b`c```"), std::string::npos) << out;  // fence longer than any run inside
}

}  // namespace
}  // namespace chokepoint::report
