#include "pipeline/run_diff.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyses/fingerprint.h"
#include "analyses/rank_sum.h"
#include "analyses/welch.h"
#include "base/read_file.h"
#include "base/safe_write.h"
#include "machine/profile_store.h"
#include "pipeline/inputs.h"
#include "report/format_util.h"
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

// untraced, then corrected, then profiled: the weaker of two sides is the larger.
constexpr int source_rank(std::string_view s) { return s == "untraced" ? 0 : s == "corrected" ? 1 : 2; }

constexpr double kReplayOver = 0.05;
// A band is a share of the figure: the ratio's range divides by (1 - it).
constexpr double kMaxUncertainty = 0.9;

// How far the recorded steps stray from their median: twice their median absolute
// deviation, as a share of the median (0 for one step). Robust to one odd step (a fixed
// decode_graphs trace: three steps of 0.45 ms and one of 0.57 ms).
double steps_spread(const report::Window& w) {
  const double p50 = w.step_time_ms.p50;
  if (w.step_ms.size() < 2 || !(p50 > 0)) return 0;
  std::vector<double> dev;
  for (double v : w.step_ms) dev.push_back(std::abs(v - p50));
  return 2 * analyses::quantile(std::move(dev), 0.5) / p50;
}

std::optional<double> correction_band(const std::string& recorder, double share) {
  const bool tracer = recorder == "chokepoint tracer";
  const CorrectionBand* b = tracer ? std::begin(kTracerBands) : std::begin(kProfilerBands);
  const CorrectionBand* e = tracer ? std::end(kTracerBands) : std::end(kProfilerBands);
  for (; b != e; ++b) {
    if (share <= b->max_share) return b->uncertainty;
  }
  return std::nullopt;
}

// Whether a run saw only live samples (no trace of the job's calls: its steps untraced): a
// recording without trace files, or a JSON report read back that names only recordings.
bool untraced(const report::DiffSide& s) {
  if (s.report.replay) return false;
  const auto& in = s.report.inputs;
  const bool only_recordings = std::all_of(
      in.begin(), in.end(), [](const report::InputInfo& i) { return i.format == "chokepoint.recording"; });
  if (s.kind == "recording") return only_recordings;
  return s.kind == "report" && !in.empty() && only_recordings;
}

double geomean(const std::vector<report::RunStep>& runs) {
  double sum = 0;
  for (const auto& r : runs) sum += std::log(r.ms);
  return std::exp(sum / static_cast<double>(runs.size()));
}

// The side's uncertainty: its least certain run's.
std::optional<double> side_uncertainty(const std::vector<report::RunStep>& runs) {
  double u = 0;
  for (const auto& r : runs) {
    if (!r.uncertainty) return std::nullopt;
    u = std::max(u, *r.uncertainty);
  }
  return u;
}

double largest_share(const std::vector<report::RunStep>& runs) {
  double m = 0;
  for (const auto& r : runs) m = std::max(m, r.recorder_share);
  return m;
}

std::vector<double> run_values(const std::vector<report::RunStep>& runs) {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(r.ms);
  return v;
}

// The headline ratio and its band (StepChange::headline*).
void headline(report::StepChange& s) {
  const double b = geomean(s.runs_before), a = geomean(s.runs_after);
  s.headline = b / a;
  s.change_pct = 100.0 * (a - b) / b;
  s.headline_source = "untraced";
  for (const auto* side : {&s.runs_before, &s.runs_after}) {
    for (const auto& r : *side) {
      if (source_rank(r.source) > source_rank(s.headline_source)) s.headline_source = r.source;
    }
  }
  const auto ub = side_uncertainty(s.runs_before), ua = side_uncertainty(s.runs_after);
  if (ub && ua && (*ub > 0 || *ua > 0)) {
    s.headline_low = *s.headline * (1 - *ub) / (1 + *ua);
    s.headline_high = *s.headline * (1 + *ub) / (1 - *ua);
  }
}

// Mann-Whitney on the representative runs' steps, each scaled to the best figure of its
// run: the recorders' cost weighs differently on the two sides (gpt_autocast: 2% of
// BEFORE's step, 49% of AFTER's), and unscaled the test would judge the recorders.
void step_test(report::StepChange& s, const report::Report& rb, const report::Report& ra) {
  if (rb.window.step_ms.size() < 2 || ra.window.step_ms.size() < 2) return;
  auto scaled = [](const std::vector<double>& steps, const report::RunStep& run) {
    std::vector<double> v = steps;
    const double k = run.profiled_ms > 0 ? run.ms / run.profiled_ms : 1;
    for (double& x : v) x *= k;
    return v;
  };
  s.step_p_value = analyses::mann_whitney(scaled(rb.window.step_ms, s.runs_before[s.rep_before]),
                                          scaled(ra.window.step_ms, s.runs_after[s.rep_after]))
                       .p_value;
}

// Several runs a side: Welch's t-test on the runs, and the A/A floor when there is one.
void judge_runs(report::StepChange& s, double low, double high, bool band_known, const NoiseFloor& aa) {
  const analyses::WelchTest t = analyses::welch_log_t(run_values(s.runs_before), run_values(s.runs_after));
  s.noise_method = "runs";
  s.p_value = t.p_value;
  s.noise_floor = aa.ratio;
  s.noise_floor_source = aa.ratio > 0 ? aa.source : "";
  const bool outside_floor = aa.ratio <= 0 || low > aa.ratio || high < 1 / aa.ratio;
  s.within_noise = !(t.p_value < kNoiseAlpha && outside_floor && band_known && (low > 1 || high < 1));
  s.noise_note = fmt::format("Welch's t-test on {} vs {} runs (log step times): p = {:.2g} {} {}", s.runs_before.size(),
                             s.runs_after.size(), t.p_value, t.p_value < kNoiseAlpha ? "<" : ">=", kNoiseAlpha);
  if (aa.ratio > 0)
    s.noise_note += fmt::format("; the A/A spread is {} ({})", report::format_ratio(aa.ratio), aa.source);
}

// One run on a side: the change's whole range against the run-to-run floor.
void judge_floor(report::StepChange& s, double low, double high, bool band_known, const NoiseFloor& aa) {
  s.noise_method = "noise-floor";
  s.noise_floor = aa.ratio > 0 ? aa.ratio : kDefaultRunFloor;
  s.noise_floor_source = aa.ratio > 0 ? aa.source : "default";
  const bool outside_floor = low > s.noise_floor || high < 1 / s.noise_floor;
  const bool steps_apart = !s.step_p_value || *s.step_p_value < kNoiseAlpha;
  s.within_noise = !(outside_floor && steps_apart && band_known);
  s.noise_note = fmt::format(
      "one run a side: run-to-run variation cannot be measured, so a change must exceed {} ({}){}",
      report::format_ratio(s.noise_floor),
      aa.ratio > 0 ? aa.source
                   : "the validation reruns' largest; `chokepoint diff --aa RUN RUN ...` records this "
                     "machine's",
      s.within_noise && band_known && !outside_floor ? ": within it" : "");
  if (s.step_p_value)
    s.noise_note += fmt::format("; steps of the two processes: Mann-Whitney p = {:.2g}", *s.step_p_value);
}

// Whether the headline stands out of the noise (StepChange::within_noise), and why.
void judge_noise(report::StepChange& s, const report::Report& rb, const report::Report& ra, const NoiseFloor& aa) {
  const double h = *s.headline;
  // The range the change may lie in: the recorders' correction band, or the figure itself.
  const double low = s.headline_low.value_or(h), high = s.headline_high.value_or(h);
  const bool band_known = side_uncertainty(s.runs_before) && side_uncertainty(s.runs_after);
  step_test(s, rb, ra);
  if (s.runs_before.size() >= 2 && s.runs_after.size() >= 2) {
    judge_runs(s, low, high, band_known, aa);
  } else {
    judge_floor(s, low, high, band_known, aa);
  }
  if (!band_known)
    s.noise_note += "; the recorders' own cost on these steps is not known well enough to call any change";
  if (s.headline_low) {
    s.noise_note += fmt::format(
        "; the recorders' own cost ({:.0f}% of the recorded step, largest side) leaves {} to {}",
        100 * std::max(largest_share(s.runs_before), largest_share(s.runs_after)),
        report::format_ratio(*s.headline_low), report::format_ratio(*s.headline_high));
  }
}

// The representative run of a side: the one with the median best figure.
size_t median_run(const std::vector<report::RunStep>& runs) {
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return runs[x].ms < runs[y].ms; });
  return order[(order.size() - 1) / 2];
}

report::StepChange step_change(const std::vector<report::DiffSide>& before, const std::vector<report::DiffSide>& after,
                               size_t rep_b, size_t rep_a, const NoiseFloor& aa) {
  report::StepChange s;
  const Report& b = before[rep_b].report;
  const Report& a = after[rep_a].report;
  s.steps_before = b.window.steps;
  s.steps_after = a.window.steps;
  s.before = b.window.step_time_ms;
  s.after = a.window.step_time_ms;
  for (const auto& r : before) s.runs_before.push_back(run_step(r));
  for (const auto& r : after) s.runs_after.push_back(run_step(r));
  s.rep_before = rep_b;
  s.rep_after = rep_a;
  auto has_steps = [](const std::vector<report::RunStep>& v) {
    return std::all_of(v.begin(), v.end(), [](const report::RunStep& r) { return r.ms > 0; });
  };
  if (!has_steps(s.runs_before) || !has_steps(s.runs_after)) {
    s.noise_method = "none";
    s.noise_note = "a run has no step times (no steps found or a live-only recording): no step comparison";
    return s;
  }
  s.speedup = s.before.p50 / s.after.p50;
  if (b.replay && a.replay && b.replay->plain_step_ms > 0 && a.replay->plain_step_ms > 0) {
    s.plain_speedup = b.replay->plain_step_ms / a.replay->plain_step_ms;
  }
  headline(s);
  judge_noise(s, b, a, aa);
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
  // AFTER's trace shows it in place (CUDA graph replays, bf16 matrix kernels, ...): applied,
  // whether or not its findings are gone (a replayed graph's launches still read as launch
  // overhead in the findings of some traces; issue 43).
  if (std::find(a.already_on.begin(), a.already_on.end(), r.id) != a.already_on.end()) return "applied";
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
  return x ? report::format_ratio(*x) : std::string("unknown (no step times)");
}

void promise_note(report::PromiseCheck& p, const report::StepChange& s, size_t applied_count) {
  const std::string predicted = !p.predicted ? "no estimate"
                                : p.predicted_range_end
                                    ? fmt::format("{:.2f}-{:.2f}x", std::min(*p.predicted, *p.predicted_range_end),
                                                  std::max(*p.predicted, *p.predicted_range_end))
                                    : fmt::format("{:.2f}x", *p.predicted);
  if (p.applied != "applied" && p.applied != "partly") {
    if (!p.note.empty()) {  // tell_which_was_applied's
      p.note += " (predicted " + predicted + ")";
      return;
    }
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
    p.measured = s.headline;
    p.note += "; measured " + ratio_text(s.headline);
    if (s.headline_low) {
      p.note += " (" + report::format_ratio(*s.headline_low) + " to " + report::format_ratio(*s.headline_high) + ")";
    }
    if (s.headline_source != "untraced" && s.speedup) {
      p.note += fmt::format(" {}; {} as profiled",
                            s.headline_source == "corrected" ? "without the recorders' own cost" : "as profiled",
                            report::format_ratio(*s.speedup));
    }
  }
  if (p.applied == "partly")
    p.note += "; its findings are not all gone (some only shrank to half their share or less): ambiguous";
  if (p.shared)
    p.note += fmt::format("; the findings of {} remedies went at once: the gain is theirs together", applied_count);
  if (s.within_noise && p.measured) p.note += "; the step-time change is within noise";
}

// Remedies whose findings went together (TF32 and bf16 autocast both remove
// no-tensor-cores): where AFTER's trace shows one of them in place, one that the trace
// would show and does not was not applied (mlp_tf32: TF32 in place, not autocast).
void tell_which_was_applied(std::vector<report::PromiseCheck>& checks, const Report& a) {
  const auto in_after = [&](const std::string& id) {
    return std::find(a.already_on.begin(), a.already_on.end(), id) != a.already_on.end();
  };
  const bool any_seen = std::any_of(checks.begin(), checks.end(), [&](const report::PromiseCheck& p) {
    return p.applied == "applied" && in_after(p.remedy);
  });
  if (!any_seen) return;
  for (report::PromiseCheck& p : checks) {
    const rules::RemedyInfo* info = rules::find_remedy(p.remedy);
    if ((p.applied != "applied" && p.applied != "partly") || in_after(p.remedy) || info == nullptr || !info->what_if ||
        !analyses::whatif::seen_in_place(*info->what_if)) {
      continue;
    }
    p.applied = "not-applied";
    std::string seen;
    for (const std::string& id : a.already_on) seen += (seen.empty() ? "" : ", ") + id;
    p.note = "not applied: AFTER's trace shows " + seen + " in place, not this";
  }
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
    out.push_back(std::move(p));
  }
  tell_which_was_applied(out, a);
  for (const auto& p : out) applied += p.applied == "applied" || p.applied == "partly" ? 1 : 0;
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

report::RunStep run_step(const report::DiffSide& s) {
  report::RunStep r;
  r.path = s.path;
  const Report& rep = s.report;
  if (rep.window.steps <= 0 || !(rep.window.step_time_ms.p50 > 0)) return r;
  r.profiled_ms = rep.window.step_time_ms.p50;
  if (rep.replay && rep.replay->plain_step_ms > 0 && rep.replay->recorded_step_ms > 0) {
    r.ms = rep.replay->plain_step_ms;
    r.source = "corrected";
    // Of the recorded median step (the figure the bands were measured against). A replay
    // longer than the recorded step by more than kReplayOver did not hold the steps
    // (empty_cache under the tracer: -18%, its figure 84% off): no band is known.
    const double share = 1 - rep.replay->plain_step_ms / r.profiled_ms;
    r.recorder_share = std::clamp(share, 0.0, 1.0);
    if (share >= -kReplayOver) r.uncertainty = correction_band(rep.replay->recorder, r.recorder_share);
    // A median of few recorded steps is itself only as sure as they agree: their spread adds
    // to the band (on the H100, 36 runs of six programs: the bands alone held 31 of them,
    // with the steps' spread 35; docs/VALIDATION.md "diff on the H100").
    if (r.uncertainty) r.uncertainty = std::min(kMaxUncertainty, *r.uncertainty + steps_spread(rep.window));
    return r;
  }
  r.ms = r.profiled_ms;
  r.source = untraced(s) ? "untraced" : "profiled";
  if (r.source == "untraced") r.uncertainty = 0;
  return r;
}

report::RunDiff compare_runs(std::vector<report::DiffSide> before, std::vector<report::DiffSide> after,
                             const NoiseFloor& aa) {
  report::RunDiff d;
  std::vector<report::RunStep> rb, ra;
  for (const auto& r : before) rb.push_back(run_step(r));
  for (const auto& r : after) ra.push_back(run_step(r));
  const size_t ib = median_run(rb), ia = median_run(ra);
  const Report& b = before[ib].report;
  const Report& a = after[ia].report;
  d.step = step_change(before, after, ib, ia, aa);
  d.categories = share_changes(b.breakdown.category_costs, a.breakdown.category_costs);
  d.kernel_classes = share_changes(b.breakdown.busy_by_class, a.breakdown.busy_by_class);
  d.idle_causes = share_changes(b.breakdown.idle_by_cause, a.breakdown.idle_by_cause);
  d.findings = finding_changes(b, a);
  d.promises = promise_checks(b, a, d.step);
  d.notes = caveats(b, a);
  if (before.size() > 1 || after.size() > 1) {
    d.notes.push_back(fmt::format("findings, shares and promises compare the median run of each side ({} and {})",
                                  before[ib].path, after[ia].path));
  }
  // The same job: the two sides, and each side's runs among themselves.
  const analyses::JobMatch m = analyses::match_jobs(b.fingerprint, a.fingerprint);
  d.same_job = !m.judged ? "unknown" : m.different ? "different" : "same";
  if (m.kernels >= 0) d.kernel_similarity = m.kernels;
  if (m.shapes >= 0) d.shape_similarity = m.shapes;
  for (const auto* side : {&before, &after}) {
    const Report& rep = side == &before ? b : a;
    for (const auto& run : *side) {
      const analyses::JobMatch r = analyses::match_jobs(rep.fingerprint, run.report.fingerprint);
      if (r.different) {
        d.notes.push_back(std::string(side == &before ? "BEFORE" : "AFTER") +
                          "'s runs are not all one program: " + run.path + ": " + r.why);
        break;
      }
    }
  }
  std::string why = not_comparable(before[ib], after[ia]);
  if (why.empty() && m.different) why = "the two sides look like different programs: " + m.why;
  if (!why.empty()) mark_not_comparable(d, why);
  d.before = std::move(before[ib]);
  d.after = std::move(after[ia]);
  return d;
}

report::RunDiff compare_reports(report::DiffSide before, report::DiffSide after, const NoiseFloor& aa) {
  std::vector<report::DiffSide> b, a;
  b.push_back(std::move(before));
  a.push_back(std::move(after));
  return compare_runs(std::move(b), std::move(a), aa);
}

namespace {

// A directory whose entries are runs: two or more recordings, JSON reports or directories
// (each of traces). A directory of trace files is one run (the ranks or windows of a job).
std::vector<std::string> runs_in(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> runs;
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || is_recording_dir(dir)) return runs;
  bool traces = false;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string p = e.path().string();
    const std::string name = e.path().filename().string();
    if (!name.empty() && name[0] == '.') continue;
    if (e.is_directory(ec)) {
      runs.push_back(p);
    } else if (e.is_regular_file(ec)) {
      if (report::looks_like_json_report(file_head(p))) {
        runs.push_back(p);
      } else {
        traces = true;
      }
    }
  }
  if (traces || runs.size() < 2) return {};
  std::sort(runs.begin(), runs.end());
  return runs;
}

}  // namespace

Result<std::vector<report::DiffSide>> load_diff_runs(const std::vector<std::string>& paths,
                                                     const importers::ImportOptions& io, const AnalyzeOptions& ao) {
  std::vector<report::DiffSide> out;
  for (const std::string& path : paths) {
    std::vector<std::string> runs = runs_in(path);
    if (runs.empty()) runs.push_back(path);
    for (const std::string& run : runs) {
      auto side = load_diff_side(run, io, ao);
      if (!side.ok()) return side.status();
      out.push_back(std::move(side).value());
    }
  }
  if (out.empty()) return Status::Error(ErrorCode::kUsage, "no runs given");
  return out;
}

Result<AaRecord> aa_record(const std::vector<report::DiffSide>& runs) {
  AaRecord r;
  if (runs.size() < 2) return Status::Error(ErrorCode::kUsage, "--aa takes two or more runs of the same program");
  for (const auto& run : runs) {
    const report::RunStep s = run_step(run);
    if (!(s.ms > 0)) return Status::Error(ErrorCode::kInput, "'" + run.path + "' has no step times");
    r.runs.push_back(run.path);
    r.values_ms.push_back(s.ms);
    const analyses::JobMatch m = analyses::match_jobs(runs.front().report.fingerprint, run.report.fingerprint);
    if (m.different) {
      return Status::Error(ErrorCode::kInput, "--aa takes runs of one program; '" + runs.front().path + "' and '" +
                                                  run.path + "' are not: " + m.why);
    }
  }
  r.device = runs.front().report.devices.empty() ? "" : runs.front().report.devices.front().name;
  const auto [lo, hi] = std::minmax_element(r.values_ms.begin(), r.values_ms.end());
  r.spread = *hi / *lo;
  char date[16] = "";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&now, &tm) != nullptr) std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
  r.date = date;
  return r;
}

std::optional<std::string> aa_path(const std::string& device) {
  if (machine::profiles_disabled()) return std::nullopt;
  const auto dir = machine::profile_dir();
  if (!dir) return std::nullopt;
  const std::string slug = machine::profile_slug(device);
  return *dir + "/aa-" + (slug.empty() ? std::string("unknown-gpu") : slug) + ".json";
}

namespace {
constexpr size_t kAaKept = 20;
constexpr const char* kAaSchema = "chokepoint.aa/1";
}  // namespace

Status save_aa_record(const AaRecord& r, const std::string& path) {
  nlohmann::ordered_json doc;
  if (auto old = read_regular_file(path, 1u << 20); old.ok()) {
    doc = nlohmann::ordered_json::parse(old.value(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || doc.value("schema", "") != kAaSchema) {
      return Status::Error(ErrorCode::kInput, "'" + path + "' is not an A/A record file (" + kAaSchema +
                                                  "); move it away to start a new one");
    }
  } else {
    doc = {{"schema", kAaSchema}, {"device", r.device}, {"records", nlohmann::ordered_json::array()}};
  }
  auto& records = doc["records"];
  if (!records.is_array()) records = nlohmann::ordered_json::array();
  records.push_back({{"date", r.date}, {"runs", r.runs}, {"values_ms", r.values_ms}, {"spread", r.spread}});
  while (records.size() > kAaKept) records.erase(records.begin());
  std::error_code ec;
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  return write_file_safely(path, doc.dump(2) + "\n");
}

NoiseFloor load_noise_floor(const std::string& path) {
  NoiseFloor f;
  auto text = read_regular_file(path, 1u << 20);
  if (!text.ok()) return f;
  const auto doc = nlohmann::json::parse(text.value(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("records") || !doc["records"].is_array()) return f;
  size_t runs = 0, records = 0;
  std::string last;
  for (const auto& rec : doc["records"]) {
    const auto it = rec.find("spread");
    if (it == rec.end() || !it->is_number() || !(it->get<double>() >= 1) || it->get<double>() > 100) continue;
    ++records;
    if (it->get<double>() > f.ratio) f.ratio = it->get<double>();
    if (rec.contains("runs") && rec["runs"].is_array()) runs += rec["runs"].size();
    if (rec.contains("date") && rec["date"].is_string()) last = rec["date"].get<std::string>();
  }
  if (records == 0) return f;
  f.source = fmt::format("this machine's A/A record: the largest of {} spread{} over {} runs{}", records,
                         records == 1 ? "" : "s", runs, last.empty() ? "" : ", last " + last);
  return f;
}

}  // namespace chokepoint::pipeline
