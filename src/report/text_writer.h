// The writer of the text report (text_reporter.h): the report, the stream, the style and
// the width, and the line primitives every section uses. Its sections are written in
// text_reporter.cc (header, verdict, breakdown, roofline, top kernels, import warnings),
// text_findings.cc (remedies and findings) and text_live.cc (what a recording's samples
// and Python stacks show).
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/terminal_text.h"
#include "report/report.h"
#include "report/reporter.h"
#include "report/style.h"
#include "report/text_layout.h"

namespace chokepoint::report::text {

// Every string of the report that comes from the input (names of kernels, devices,
// files, processes, the command line; prose that quotes them) goes through here on its
// way to the terminal: a control character is shown as an escape, never sent.
inline std::string safe(std::string_view s) { return escape_controls(s); }

// Below this many columns the tables cannot line up; lines overflow instead.
inline constexpr size_t kMinWidth = 60;
// Column of the values in the header block ("  step time mean 412.3 ms").
inline constexpr size_t kFieldLabelWidth = 12;

// Writes one report; holds the output, the style and the width so that every section
// is a short method.
class TextWriter {
 public:
  TextWriter(const Report& r, std::ostream& out, const RenderOptions& opts)
      : r_(r),
        out_(out),
        style_(opts),
        width_(std::max(kMinWidth, static_cast<size_t>(std::max(opts.width, 0)))),
        timings_(opts.timings) {}

  void write();

 private:
  // Writes `lines`: the first after `prefix`, the others after `indent` spaces.
  void emit(const std::string& prefix, const std::vector<std::string>& lines, size_t indent,
            std::optional<Tone> tone = std::nullopt) {
    for (size_t i = 0; i < lines.size(); ++i) {
      out_ << (i == 0 ? prefix : std::string(indent, ' ')) << (tone ? style_(*tone, lines[i]) : lines[i]) << '\n';
    }
  }

  // Columns left after a prefix of `used` columns; never fewer than a readable minimum.
  size_t room(size_t used) const {
    constexpr size_t kMinLine = 20;
    return width_ > used + kMinLine ? width_ - used : kMinLine;
  }

  // `text` wrapped after `prefix` (which may carry escape codes, so its width comes from
  // `prefix_plain`), continuation lines indented by `indent`.
  void wrapped(const std::string& prefix, std::string_view prefix_plain, std::string_view text, size_t indent,
               std::optional<Tone> tone = std::nullopt) {
    emit(prefix, wrap(safe(text), room(display_width(prefix_plain)), room(indent)), indent, tone);
  }

  // A header line: a dim label, then items joined by " · ", wrapped between items.
  void field(std::string_view label, const std::vector<std::string>& items) {
    const std::string prefix = "  " + pad_right(label, kFieldLabelWidth - 2);
    std::vector<std::string> shown;
    for (const std::string& item : items) shown.push_back(safe(item));
    emit(style_(Tone::kDim, prefix), wrap_items(shown, room(kFieldLabelWidth), room(kFieldLabelWidth)),
         kFieldLabelWidth);
  }

  // text_reporter.cc
  void header();
  void step_fields();
  void verdict();
  void distributed_section();
  void breakdown();
  void category_costs();
  void roofline();
  void top_kernels();
  void import_stats();

  // text_findings.cc
  void remedies();
  void remedy(size_t rank, const rules::RemedyAdvice& a);
  std::vector<std::string> unpaying_what_ifs() const;
  void replay_line(const Replay& rp);
  void findings();
  void finding(size_t rank, const rules::Finding& f);

  // text_live.cc
  void live_header();
  void live_section();
  void host_section();
  void no_gpu_host_section(const analyses::HostAttribution& h);

  const Report& r_;
  std::ostream& out_;
  Style style_;
  size_t width_;
  bool timings_;
};

}  // namespace chokepoint::report::text
