#include "pipeline/run_diff.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "analyses/rank_sum.h"
#include "base/read_file.h"
#include "pipeline/inputs.h"
#include "report/json_report_reader.h"

namespace chokepoint::pipeline {
namespace {

using report::Report;

// The first bytes of a regular file ("" when it cannot be read: the analyze pipeline then
// says why).
std::string file_head(const std::string& path) {
  auto fd = open_regular_file(path);
  if (!fd.ok()) return {};
  std::string head(4096, '\0');
  const ssize_t n = ::read(fd.value(), head.data(), head.size());
  ::close(fd.value());
  head.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return head;
}

// Within noise by ranges: each side's median lies inside the other's min..max.
void judge_by_ranges(report::StepChange& s) {
  const bool after_in = s.after.p50 >= s.before.min && s.after.p50 <= s.before.max;
  const bool before_in = s.before.p50 >= s.after.min && s.before.p50 <= s.after.max;
  s.noise_method = "ranges";
  s.within_noise = after_in || before_in;
  s.noise_note = s.within_noise ? "a median lies within the other side's min..max step range: within noise"
                                : "each median lies outside the other side's min..max step range";
}

report::StepChange step_change(const Report& b, const Report& a) {
  report::StepChange s;
  s.steps_before = b.window.steps;
  s.steps_after = a.window.steps;
  s.before = b.window.step_time_ms;
  s.after = a.window.step_time_ms;
  if (s.steps_before <= 0 || s.steps_after <= 0 || s.before.p50 <= 0 || s.after.p50 <= 0) {
    s.noise_method = "none";
    s.noise_note = "a side has no step times (no steps found or a live-only recording): no step comparison";
    return s;
  }
  s.speedup = s.before.p50 / s.after.p50;
  s.change_pct = 100.0 * (s.after.p50 - s.before.p50) / s.before.p50;
  if (b.replay && a.replay && b.replay->plain_step_ms > 0 && a.replay->plain_step_ms > 0) {
    s.plain_speedup = b.replay->plain_step_ms / a.replay->plain_step_ms;
  }
  if (b.window.step_ms.size() < 2 || a.window.step_ms.size() < 2) {
    judge_by_ranges(s);
    return s;
  }
  const analyses::RankTest t = analyses::mann_whitney(b.window.step_ms, a.window.step_ms);
  s.noise_method = "mann-whitney";
  s.p_value = t.p_value;
  s.within_noise = t.p_value >= kNoiseAlpha;
  s.noise_note = fmt::format("Mann-Whitney U test on {} vs {} steps{}: p = {:.2g} {} {}", b.window.step_ms.size(),
                             a.window.step_ms.size(), t.exact ? " (exact)" : "", t.p_value, s.within_noise ? ">=" : "<",
                             kNoiseAlpha);
  if (s.within_noise && b.window.step_ms.size() + a.window.step_ms.size() < 8) {
    s.noise_note += "; too few steps for the test to tell (record more steps to decide)";
  }
  return s;
}

// Every name of either side, BEFORE's order first, largest change first within.
std::vector<report::ShareChange> share_changes(const std::vector<report::Share>& b,
                                               const std::vector<report::Share>& a) {
  std::vector<report::ShareChange> out;
  std::map<std::string, size_t> at;
  auto row = [&](const std::string& name) -> report::ShareChange& {
    auto [it, added] = at.emplace(name, out.size());
    if (added) out.push_back({name});
    return out[it->second];
  };
  for (const report::Share& s : b) {
    auto& r = row(s.name);
    r.before_ms = s.ms_per_step;
    r.before_pct = s.pct;
  }
  for (const report::Share& s : a) {
    auto& r = row(s.name);
    r.after_ms = s.ms_per_step;
    r.after_pct = s.pct;
  }
  std::stable_sort(out.begin(), out.end(), [](const report::ShareChange& x, const report::ShareChange& y) {
    return std::abs(x.after_ms - x.before_ms) > std::abs(y.after_ms - y.before_ms);
  });
  return out;
}

std::vector<report::FindingChange> finding_changes(const Report& b, const Report& a) {
  std::map<std::string, const rules::Finding*> before, after;
  for (const auto& f : b.findings) before.emplace(f.id, &f);
  for (const auto& f : a.findings) after.emplace(f.id, &f);
  std::vector<report::FindingChange> resolved, added, still;
  for (const auto& f : b.findings) {
    if (after.count(f.id) == 0 && before.at(f.id) == &f) resolved.push_back({f.id, f.title, "resolved", f.severity});
  }
  for (const auto& f : a.findings) {
    if (after.at(f.id) != &f) continue;  // the same rule twice: once
    auto it = before.find(f.id);
    report::FindingChange c{f.id, f.title, it == before.end() ? "new" : "still", Severity::kInfo, f.severity};
    if (it != before.end()) c.severity_before = it->second->severity;
    (it == before.end() ? added : still).push_back(c);
  }
  resolved.insert(resolved.end(), added.begin(), added.end());
  resolved.insert(resolved.end(), still.begin(), still.end());
  return resolved;
}

// A finding still present counts as shrunk at or below this share of its BEFORE share
// of the step (a fix that removed most of it: torch.compile fusing most elementwise
// kernels leaves the rest flagged).
constexpr double kShrunk = 0.5;
// The remedy whose estimate is of samples/s, not of the step (rules/remedies.h): a bigger
// batch makes each step do more, so step time cannot check it.
constexpr std::string_view kThroughputRemedy = "bigger-batch";

std::string applied_state(const rules::RemedyAdvice& r, const Report& b, const Report& a) {
  size_t known = 0, gone = 0, shrunk = 0;
  for (const std::string& id : r.findings) {
    auto fb = std::find_if(b.findings.begin(), b.findings.end(), [&](const auto& f) { return f.id == id; });
    if (fb == b.findings.end()) continue;
    ++known;
    auto fa = std::find_if(a.findings.begin(), a.findings.end(), [&](const auto& f) { return f.id == id; });
    if (fa == a.findings.end()) {
      ++gone;
    } else if (fb->time_share_pct > 0 && fa->time_share_pct <= kShrunk * fb->time_share_pct) {
      ++shrunk;
    }
  }
  if (known == 0) return "unknown";
  if (gone == known) return "applied";
  return gone + shrunk == 0 ? "not-applied" : "partly";
}

std::string ratio_text(const std::optional<double>& x) {
  return x ? fmt::format("{:.2f}x", *x) : std::string("unknown (no step times)");
}

void promise_note(report::PromiseCheck& p, const report::StepChange& s, size_t applied_count) {
  const std::string predicted = !p.predicted ? "no estimate"
                                : p.predicted_range_end
                                    ? fmt::format("{:.2f}-{:.2f}x", std::min(*p.predicted, *p.predicted_range_end),
                                                  std::max(*p.predicted, *p.predicted_range_end))
                                    : fmt::format("{:.2f}x", *p.predicted);
  if (p.applied != "applied" && p.applied != "partly") {
    p.note = p.applied == "not-applied" ? "not applied: its findings are still present (predicted " + predicted + ")"
                                        : "cannot tell: it names no finding of BEFORE (predicted " + predicted + ")";
    return;
  }
  p.shared = applied_count > 1;
  p.note = p.predicted ? "before predicted " + predicted + " from " + p.remedy
                       : "before gave no estimate for " + p.remedy;
  if (p.remedy == kThroughputRemedy) {
    p.note += " (samples/s); a bigger batch changes the work per step, so the step time cannot check it";
  } else {
    p.measured = s.speedup;
    p.note += "; measured " + ratio_text(s.speedup);
    if (s.plain_speedup) p.note += fmt::format(" ({:.2f}x without the recorders' own cost)", *s.plain_speedup);
  }
  if (p.applied == "partly")
    p.note += "; its findings are not all gone (some only shrank to half their share or less): ambiguous";
  if (p.shared)
    p.note += fmt::format("; the findings of {} remedies went at once: the gain is theirs together", applied_count);
  if (s.within_noise && p.measured) p.note += "; the step-time change is within noise";
}

std::vector<report::PromiseCheck> promise_checks(const Report& b, const Report& a, const report::StepChange& s) {
  std::vector<report::PromiseCheck> out;
  size_t applied = 0;
  for (const rules::RemedyAdvice& r : b.remedies) {
    report::PromiseCheck p;
    p.remedy = r.id;
    p.title = r.title;
    p.predicted = r.estimated_speedup;
    p.predicted_range_end = r.speedup_range_end;
    p.applied = applied_state(r, b, a);
    applied += p.applied == "applied" || p.applied == "partly" ? 1 : 0;
    out.push_back(std::move(p));
  }
  for (auto& p : out) promise_note(p, s, applied);
  return out;
}

// How the steps were found, without what was found ("inferred from the repeating GPU op
// sequence (800 ops per step, ...)", "iterations of the loop in train.py main() counted ...;
// 4 longer stretches left out"): two runs found the same way differ in their counts.
std::string step_method(const std::string& source) {
  return source.substr(0, std::min(source.find(" ("), source.find(';')));
}

std::vector<std::string> caveats(const Report& b, const Report& a) {
  std::vector<std::string> notes;
  const std::string db = b.devices.empty() ? "" : b.devices[0].name;
  const std::string da = a.devices.empty() ? "" : a.devices[0].name;
  if (db != da && !db.empty() && !da.empty()) notes.push_back("the runs are on different GPUs: " + db + " and " + da);
  if (step_method(b.window.step_source) != step_method(a.window.step_source)) {
    notes.push_back("steps were found differently: '" + b.window.step_source + "' and '" + a.window.step_source + "'");
  }
  return notes;
}

// Import stats that mean evidence was lost or is not to be believed: a cut or corrupt
// file, lines that were not records, values no machine reads, fields of the wrong type.
// (A trace window cut by the process's exit, cupti_window_cut, is whole up to the exit.)
bool damaging(const timeline::ImportStat& st) {
  if (st.count <= 0) return false;
  if (st.severity == Severity::kCritical) return true;
  for (std::string_view word :
       {"truncated", "corrupt", "malformed", "unreadable", "oversized", "implausible", "failed_files", "mistyped"}) {
    if (st.name.find(word) != std::string::npos) return true;
  }
  return false;
}

// Why the two sides' findings cannot be set against each other, "" when they can. A
// finding missing from a damaged side may be missing with the evidence, not resolved; a
// trace and a recording see different things (kernels, host samples), so one's findings
// are not the other's. Issue 47: each of these was reported as "resolved" and "applied".
std::string not_comparable(const report::DiffSide& b, const report::DiffSide& a) {
  for (const report::DiffSide* side : {&b, &a}) {
    for (const timeline::ImportStat& st : side->report.import_stats) {
      if (damaging(st)) {
        return std::string(side == &b ? "BEFORE" : "AFTER") + " (" + side->path + ") is damaged (" + st.name + ": " +
               st.description + ")";
      }
    }
  }
  const bool rec_b = b.kind == "recording", rec_a = a.kind == "recording";
  if (rec_b != rec_a) {
    return "BEFORE is a " + b.kind + " and AFTER a " + a.kind +
           ": one sees kernels, the other live samples, so their findings differ by source, not by the change";
  }
  return "";
}

// With sides that cannot be compared, no finding is "resolved" and no remedy "applied":
// what went missing is said to be unclear, and why.
void mark_not_comparable(report::RunDiff& d, const std::string& why) {
  for (report::FindingChange& f : d.findings) {
    if (f.status == "resolved") f.status = "unclear";
  }
  for (report::PromiseCheck& p : d.promises) {
    p.applied = "unknown";
    p.shared = false;
    p.measured.reset();
    p.note = "cannot tell: " + why;
  }
  d.notes.insert(d.notes.begin(), "findings and promises not compared: " + why);
}

}  // namespace

Result<report::DiffSide> load_diff_side(const std::string& path, const importers::ImportOptions& io,
                                        const AnalyzeOptions& ao) {
  report::DiffSide side;
  side.path = path;
  if (is_regular_file_path(path) && report::looks_like_json_report(file_head(path))) {
    auto text = read_regular_file(path);
    if (!text.ok()) return text.status();
    auto r = report::report_from_json(text.value());
    if (!r.ok()) return Status::Error(ErrorCode::kInput, "'" + path + "': " + r.status().message());
    side.kind = "report";
    side.report = std::move(r).value();
    return side;
  }
  side.kind = is_recording_dir(path) ? "recording" : "trace";
  auto r = analyze_paths({path}, io, ao);
  if (!r.ok()) return r.status();
  side.report = std::move(r).value();
  return side;
}

report::RunDiff compare_reports(report::DiffSide before, report::DiffSide after) {
  report::RunDiff d;
  const Report& b = before.report;
  const Report& a = after.report;
  d.step = step_change(b, a);
  d.categories = share_changes(b.breakdown.category_costs, a.breakdown.category_costs);
  d.kernel_classes = share_changes(b.breakdown.busy_by_class, a.breakdown.busy_by_class);
  d.idle_causes = share_changes(b.breakdown.idle_by_cause, a.breakdown.idle_by_cause);
  d.findings = finding_changes(b, a);
  d.promises = promise_checks(b, a, d.step);
  d.notes = caveats(b, a);
  if (const std::string why = not_comparable(before, after); !why.empty()) mark_not_comparable(d, why);
  d.before = std::move(before);
  d.after = std::move(after);
  return d;
}

}  // namespace chokepoint::pipeline
