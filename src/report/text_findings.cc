// The text report's remedies (what to change, best first, and what the replay started
// from) and its ranked findings with their evidence and fix (text_writer.h).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/format_util.h"
#include "report/text_writer.h"

namespace chokepoint::report::text {
namespace {

// A ten-second read: the strongest numbers of a finding only (the JSON has all).
constexpr size_t kMaxEvidence = 4;
// Indent of everything under a finding's title line.
constexpr std::string_view kFindingIndent = "    ";

// "   fires ≥ 20.0%" or "   ceiling 4,800 GB/s": the side of the threshold that counts.
std::string threshold_text(const rules::Evidence& e) {
  if (!e.threshold) return "";
  std::string s = "   ";
  if (e.side != rules::ThresholdSide::kCeiling) s += "fires ";
  s += safe(format_threshold(e));
  return s;
}

std::string severity_tag(Severity s) {
  switch (s) {
    case Severity::kCritical: return "[CRITICAL]";
    case Severity::kWarning: return "[WARNING]";
    case Severity::kInfo: return "[INFO]";
  }
  return "[INFO]";
}

Tone severity_tone(Severity s) {
  switch (s) {
    case Severity::kCritical: return Tone::kRed;
    case Severity::kWarning: return Tone::kYellow;
    case Severity::kInfo: return Tone::kCyan;
  }
  return Tone::kCyan;
}

// "est. 1.42x (replayed: 10 -> 7 ms per step)", "up to 2.0x", "not estimated".
std::string remedy_estimate(const rules::RemedyAdvice& a) {
  if (!a.estimated_speedup) return "not estimated";
  std::string est = (a.estimate_from == "upper bound" ? "up to " : "est. ") +
                    format_speedup_range(*a.estimated_speedup, a.speedup_range_end) +
                    (rules::estimate_is_throughput(a.id) ? " samples/s" : "");
  if (a.estimate_from == "trace what-if") {
    est += fmt::format(" (replayed: {} -> {} ms per step)", format_number(a.step_ms_before),
                       format_number(a.step_ms_after));
  } else if (!a.estimate_from.empty() && a.estimate_from != "upper bound") {
    est += " (from the " + a.estimate_from + ")";
  }
  return est;
}

}  // namespace

// What to change, best first: each remedy with its estimate, what it removes, the change;
// then the remedies replayed that would not pay, and what the replay started from.
void TextWriter::remedies() {
  if (!r_.remedies.empty()) {
    out_ << style_(Tone::kBold, "What to change") << "\n";
    wrapped("  ", "  ", std::string("(") + kRemedyOrder + ")", 2, Tone::kDim);
    for (size_t i = 0; i < r_.remedies.size(); ++i) remedy(i + 1, r_.remedies[i]);
  }
  if (const std::string on = already_on_text(r_); !on.empty()) {
    wrapped("  ", "  ", "already in place (the trace shows it, so it is not advised): " + on, 2, Tone::kDim);
  }
  const std::vector<std::string> idle = unpaying_what_ifs();
  if (!idle.empty()) {
    const std::string label = "  also replayed, under 1.05x:";
    const size_t indent = label.size() + 1;
    emit(style_(Tone::kDim, label) + " ", wrap_items(idle, room(indent), room(indent)), indent, Tone::kDim);
  }
  if (r_.replay) replay_line(*r_.replay);
  if (!r_.remedies.empty() || !idle.empty() || r_.replay) out_ << '\n';
}

void TextWriter::remedy(size_t rank, const rules::RemedyAdvice& a) {
  const std::string lead = fmt::format("{:>2}. ", rank);
  wrapped(lead, lead, a.title + " — " + remedy_estimate(a), kFindingIndent.size(), Tone::kBold);
  const std::string ind(kFindingIndent);
  wrapped(ind + style_(Tone::kBold, "change:") + " ", ind + "change: ", a.change, ind.size() + 8);
  std::string removes;
  for (const auto& id : a.findings) removes += (removes.empty() ? "" : ", ") + id;
  if (!removes.empty())
    wrapped(ind + style_(Tone::kDim, "removes:") + " ", ind + "removes: ", removes, ind.size() + 9, Tone::kDim);
  if (!a.what_changes.empty()) {
    wrapped(ind + style_(Tone::kDim, "replay:") + " ", ind + "replay: ", a.what_changes, ind.size() + 8, Tone::kDim);
  }
  if (!a.assumptions.empty()) {
    const std::string more = a.assumptions.size() > 1
                                 ? fmt::format(" (+{} more in --format json)", a.assumptions.size() - 1)
                                 : "";
    wrapped(ind + style_(Tone::kDim, "assumes:") + " ", ind + "assumes: ", a.assumptions.front() + more, ind.size() + 9,
            Tone::kDim);
  }
}

// Remedies the trace was replayed with that would not pay: worth knowing too.
std::vector<std::string> TextWriter::unpaying_what_ifs() const {
  std::vector<std::string> idle;
  for (const auto& w : r_.what_ifs) {
    const bool listed = std::any_of(r_.remedies.begin(), r_.remedies.end(),
                                    [&](const auto& a) { return a.id == w.id; });
    if (!listed && w.estimated_speedup && *w.estimated_speedup < 1.05) {
      idle.push_back(fmt::format("{} {}", safe(w.id), format_speedup(*w.estimated_speedup)));
    }
  }
  return idle;
}

void TextWriter::replay_line(const Replay& rp) {
  std::string line = fmt::format("replay of {} steps: {} ms per step recorded, {} replayed", rp.steps,
                                 format_number(rp.recorded_step_ms), format_number(rp.replayed_step_ms));
  if (!rp.recorder.empty()) {
    line += fmt::format(", {} without {}'s own cost (what the estimates start from)", format_number(rp.plain_step_ms),
                        rp.recorder);
  }
  wrapped("  " + style_(Tone::kDim, ""), "  ", line, 4, Tone::kDim);
}

void TextWriter::finding(size_t rank, const rules::Finding& f) {
  // Title line: rank, severity, id, title; the rest sits under kFindingIndent.
  const std::string tag = severity_tag(f.severity);
  const std::string lead = fmt::format("{:>2}. ", rank);
  const std::string id = safe(f.id);
  const std::string plain = lead + tag + " " + id + (f.title.empty() ? "" : " — ");
  const std::string styled = lead + style_(severity_tone(f.severity), tag) + " " + style_(Tone::kBold, id) +
                             (f.title.empty() ? "" : " — ");
  wrapped(styled, plain, f.title, kFindingIndent.size());

  const std::string indent(kFindingIndent);
  std::string by;
  if (!f.estimate_remedy.empty())
    by = (rules::estimate_is_throughput(f.estimate_remedy) ? " samples/s with " : " with ") + f.estimate_remedy;
  const std::string gain = (f.estimated_speedup
                                ? "-> est. " + format_speedup_range(*f.estimated_speedup, f.speedup_range_end) + by
                                : std::string("-> speedup not estimated")) +
                           " · " + format_pct(f.time_share_pct) + (r_.live ? " of the run" : " of step time");
  wrapped(indent, indent, gain, indent.size() + 3);

  if (!f.detail.empty()) wrapped(indent, indent, f.detail, indent.size(), Tone::kDim);

  const size_t shown = std::min(f.evidence.size(), kMaxEvidence);
  size_t metric_w = 0, value_w = 0, threshold_w = 0;
  for (size_t i = 0; i < shown; ++i) {
    const rules::Evidence& e = f.evidence[i];
    metric_w = std::max(metric_w, display_width(safe(humanize(e.metric))));
    value_w = std::max(value_w, display_width(safe(format_value(e.value, e.unit))));
    threshold_w = std::max(threshold_w, display_width(threshold_text(e)));
  }
  // The metric column gives way so that value and threshold stay on the line; a metric
  // name longer than its column is cut (the JSON has it whole).
  const size_t fixed = indent.size() + 2 + 2 + value_w + threshold_w;
  metric_w = std::min({metric_w, width_ / 2, width_ > fixed + 8 ? width_ - fixed : size_t{8}});
  for (size_t i = 0; i < shown; ++i) {
    const rules::Evidence& e = f.evidence[i];
    std::string metric = safe(humanize(e.metric));
    if (display_width(metric) > metric_w) metric = metric.substr(0, metric_w - 1) + "~";
    out_ << indent << "  " << pad_right(metric, metric_w) << "  "
         << pad_left(safe(format_value(e.value, e.unit)), value_w);
    if (e.threshold) out_ << style_(Tone::kDim, threshold_text(e));
    out_ << '\n';
  }
  if (f.evidence.size() > shown) {
    out_ << indent << "  " << style_(Tone::kDim, fmt::format("+{} more in --format json", f.evidence.size() - shown))
         << '\n';
  }

  if (!f.recommendation.empty()) {
    const std::string prefix = indent + "fix: ";
    wrapped(indent + style_(Tone::kBold, "fix:") + " ", prefix, f.recommendation, prefix.size());
  }
  out_ << '\n';
}

void TextWriter::findings() {
  if (r_.findings.empty()) {
    out_ << style_(Tone::kBold, "Findings") << ": none (no rule fired on this input)\n\n";
    return;
  }
  out_ << style_(Tone::kBold, fmt::format("Findings ({}, those of the best remedy first)", r_.findings.size()))
       << "\n\n";
  for (size_t i = 0; i < r_.findings.size(); ++i) finding(i + 1, r_.findings[i]);
}

}  // namespace chokepoint::report::text
