#include "rules/diagnose.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "rules/verdict.h"

namespace chokepoint::rules {

namespace {

// A remedy that gains less than this is not worth leading with (issue 10; the same bar as
// a finding worth a warning is 1.1x, rule.h's severity_for).
constexpr double kMinHeadlineGain = 1.05;

// One finding from what a rule's evaluators found: the trace's (exact attribution) leads,
// the samples that agree add their evidence, the machine's its assessment.
Finding merge(std::optional<Finding> t, std::optional<Finding> s, std::optional<Finding> m, std::optional<Finding> k) {
  Finding f;
  if (!t && !s && !m && k) {
    f = std::move(*k);
    f.sources = {"stacks"};
    return f;
  }
  if (t) {
    f = std::move(*t);
    f.sources = {"trace"};
    if (s) {
      f.detail += " The live samples agree: " + s->title + ".";
      for (auto& e : s->evidence) f.evidence.push_back(std::move(e));
      f.sources.push_back("samples");
    }
  } else if (s) {
    f = std::move(*s);
    f.sources = {"samples"};
  } else {
    f = std::move(*m);
    f.sources = {"machine"};
    return f;
  }
  if (m) {
    f.detail += " The machine check agrees: " + m->title + ".";
    f.sources.push_back("machine");
  }
  if (k) {
    // The Python stacks name the line: it leads the title, their numbers join the evidence.
    f.detail += " Python stacks: " + k->detail;
    f.title = k->title + " — " + f.title;
    for (auto& e : k->evidence) f.evidence.push_back(std::move(e));
    f.sources.push_back("stacks");
    // The stacks' what-if (time on the launching thread) stands where the samples had
    // none: host-work from CPU shares alone is not estimated.
    if (!f.estimated_speedup && k->estimated_speedup) {
      f.estimated_speedup = k->estimated_speedup;
      f.estimate_source = "stacks";
    }
  }
  return f;
}

// The machine finding of a rule: its most severe assessment that found something.
std::optional<Finding> machine_finding(const Rule& r, const MachineEvidence& m) {
  std::optional<Finding> out;
  for (const Assessment& a : r.machine(m)) {
    if (a.outcome != Assessment::Outcome::kFinding) continue;
    if (out && out->severity >= a.severity) continue;
    Finding f;
    f.severity = a.severity;
    f.title = a.gpu >= 0 ? fmt::format("GPU {}: {}: {}", a.gpu, a.title, a.observed) : a.title + ": " + a.observed;
    f.detail = a.observed + (a.expected.empty() ? "" : " (expected: " + a.expected + ")");
    f.recommendation = a.advice;
    out = std::move(f);
  }
  return out;
}

double gain(const RemedyAdvice& r) { return r.estimated_speedup.value_or(0); }

// Remedies of the findings, with their estimates.
// Whether the trace shows the remedy already on (analyses/whatif: CUDA graphs, a fused
// optimizer): then it is not advised, whichever finding lists it.
bool already_applied(const RemedyInfo& info, const EvidenceSet& ev) {
  if (!info.what_if || ev.trace == nullptr) return false;
  const auto& on = ev.trace->a.already_applied;
  return std::find(on.begin(), on.end(), *info.what_if) != on.end();
}

// A remedy's advice, with the estimate of its what-if: the trace's replay, else the
// ranks' estimate (analyses/distributed/cross_rank.h).
RemedyAdvice advice_of(const RemedyInfo& info, const EvidenceSet& ev) {
  RemedyAdvice a;
  a.id = info.id;
  a.title = info.title;
  a.change = info.change;
  a.changes_training = info.changes_training;
  if (!info.what_if) return a;
  const analyses::whatif::Estimate* e = ev.trace != nullptr ? analyses::estimate_of(ev.trace->a, *info.what_if)
                                                            : nullptr;
  a.estimate_from = "trace what-if";
  if (e == nullptr && ev.ranks != nullptr) {
    for (const auto& x : ev.ranks->d.remedies) {
      if (x.remedy == *info.what_if) e = &x;
    }
    a.estimate_from = "ranks what-if";
  }
  if (e == nullptr) {
    a.estimate_from.clear();
    return a;
  }
  a.estimated_speedup = e->speedup;
  a.speedup_range_end = e->speedup_at_high_cost;
  a.step_ms_before = e->step_ms_before;
  a.step_ms_after = e->step_ms_after;
  a.what_changes = e->change;
  a.assumptions = e->assumptions;
  return a;
}

std::vector<RemedyAdvice> remedies_of(const std::vector<Finding>& findings, const EvidenceSet& ev) {
  std::vector<RemedyAdvice> out;
  std::map<std::string, size_t> index;
  for (const Finding& f : findings) {
    for (size_t k = 0; k < f.remedies.size(); ++k) {
      const RemedyInfo* info = find_remedy(f.remedies[k]);
      if (info == nullptr || already_applied(*info, ev)) continue;
      auto [it, fresh] = index.emplace(std::string(info->id), out.size());
      if (fresh) out.push_back(advice_of(*info, ev));
      RemedyAdvice& a = out[it->second];
      a.findings.push_back(f.id);
      if (!info->change_at_lines.empty() &&
          std::find(f.sources.begin(), f.sources.end(), "stacks") != f.sources.end()) {
        a.change = info->change_at_lines;
      }
      // Without a trace what-if, a finding may carry its own estimate for its first remedy:
      // the fed rate of a starved GPU (live/starvation.h), or a bound (host-work).
      if (!a.estimated_speedup && k == 0 && f.estimated_speedup) {
        a.estimated_speedup = f.estimated_speedup;
        a.estimate_from = info->upper_bound ? "upper bound"
                                            : (f.estimate_source.empty() ? f.sources.front() : f.estimate_source);
      }
    }
  }
  // Largest gain first; the headline is the best remedy that keeps the training as it is,
  // unless only a training change gains enough.
  std::stable_sort(out.begin(), out.end(),
                   [](const RemedyAdvice& a, const RemedyAdvice& b) { return gain(a) > gain(b); });
  auto pick = [&](bool training_too) {
    return std::find_if(out.begin(), out.end(), [&](const RemedyAdvice& r) {
      return (training_too || !r.changes_training) && r.estimate_from != "upper bound" && gain(r) >= kMinHeadlineGain;
    });
  };
  auto head = pick(false);
  if (head == out.end()) head = pick(true);
  if (head != out.end()) std::rotate(out.begin(), head, head + 1);
  return out;
}

// Lowers the confidence by the largest share of input lost; from kUntrustedLossShare on
// the verdict is unknown, since what is left may not be the run (a GPU lost after the
// first fifth of it, kernels without a duration that make the GPU look idle). True then.
bool apply_data_loss(const EvidenceSet& ev, Diagnosis& d) {
  std::vector<DataLoss> losses;
  if (ev.trace != nullptr && ev.trace->stats != nullptr) losses = ev.trace->stats->losses();
  if (ev.samples != nullptr) {
    for (const DataLoss& l : ev.samples->rec.losses) add_loss(losses, l.what, l.lost, l.total);
  }
  const DataLoss* worst = worst_loss(losses);
  if (worst == nullptr) return false;
  d.data_lost = *worst;
  if (worst->share() < kUntrustedLossShare) {
    d.confidence *= 1.0 - worst->share();
    return false;
  }
  d.bound = Category::kUnknown;
  d.confidence = 0;
  d.unknown_reason = fmt::format("{} of {} {}, {:.0f}%; what is left may not represent the run", worst->lost,
                                 worst->total, worst->what, 100 * worst->share());
  return true;
}

// A Kineto trace cut off inside its events before any of its GPU work (the GPU events
// come after the CPU ops in the file: healthy_bf16 cut at 30%) is not "a CPU-only trace":
// the verdict is unknown because the file is cut. True then. (A cut that leaves GPU work
// counts the ops it orphaned as lost data: apply_data_loss.)
bool apply_cut_trace(const EvidenceSet& ev, Diagnosis& d) {
  if (ev.trace == nullptr || ev.trace->stats == nullptr || ev.trace->stats->count(StatId::kKinetoEventsCut) == 0 ||
      ev.trace->tl.gpu_ops.size() > 0)
    return false;
  d.bound = Category::kUnknown;
  d.confidence = 0;
  d.unknown_reason =
      "the trace file is cut off inside its events before any GPU work: torch.profiler writes the GPU work after "
      "the CPU ops";
  return true;
}

// What is left of a run that lost too much cannot say what a fix gains (neg_all: 13x
// promised from the 13% of kernels that kept their durations): the advice stays, its
// estimates go.
void withhold_estimates(Diagnosis& d) {
  d.estimates_withheld = true;
  for (auto& f : d.findings) {
    f.estimated_speedup.reset();
    f.speedup_range_end.reset();
  }
  for (auto& r : d.remedies) {
    r.estimated_speedup.reset();
    r.speedup_range_end.reset();
    r.estimate_from = "not estimated: too much of the input was lost";
    r.step_ms_before = r.step_ms_after = 0;
    r.what_changes.clear();
  }
}

// One rule's finding from every evaluator that has evidence, or none.
// A finding's id and category are its rule's, whichever evaluator made it: the
// descriptor is the one place that says them.
void stamp(Finding& f, const Rule& r) {
  f.id = std::string(r.id);
  f.category = r.category;
}

std::optional<Finding> rule_finding(const Rule& r, const EvidenceSet& ev, bool trace) {
  // The cross-rank rules read the ranks alone.
  if (ev.ranks != nullptr && r.ranks != nullptr) {
    std::optional<Finding> d = r.ranks(*ev.ranks);
    if (d) {
      d->sources = {"ranks"};
      stamp(*d, r);
    }
    return d;
  }
  std::optional<Finding> t, s, m, k;
  if (trace && r.trace != nullptr) t = r.trace(*ev.trace);
  if (ev.samples != nullptr && r.samples != nullptr) s = r.samples(*ev.samples);
  if (ev.machine != nullptr && r.machine != nullptr) m = machine_finding(r, *ev.machine);
  if (ev.stacks != nullptr && r.stacks != nullptr) k = r.stacks(*ev.stacks);
  // Stacks that account for the GPU's idle time decide between input, sync and host
  // work: a samples-only guess (from CPU shares) that they do not back is dropped.
  if (ev.stacks != nullptr && ev.stacks->decisive() && r.stacks != nullptr && !r.stacks_can_miss && !t && !k) {
    s.reset();
  }
  // Where the stacks measured GIL waiting, that measure decides, not switch rates.
  if (r.gil_measure_decides && ev.stacks != nullptr && ev.stacks->gil != nullptr && !k) s.reset();
  // A trace with the host's ops and annotations (torch.profiler) attributes every gap:
  // what its evaluator did not find, samples of the same run do not contradict. The
  // CUPTI tracer's trace sees no DataLoader or Python, so samples keep their say there.
  if (trace && r.trace != nullptr && !t && ev.trace->tl.cpu_ranges.size() > 0) s.reset();
  if (!t && !s && !m && !k) return std::nullopt;
  Finding f = merge(std::move(t), std::move(s), std::move(m), std::move(k));
  stamp(f, r);
  return f;
}

// The verdict: from the trace when it holds GPU work, else from the samples.
Verdict choose_verdict(const EvidenceSet& ev, bool trace, std::vector<Finding>& findings) {
  Verdict v;
  if (trace || (ev.trace != nullptr && ev.samples == nullptr)) {
    v = trace_verdict(*ev.trace);
  } else if (ev.samples != nullptr) {
    v = sample_verdict(*ev.samples, findings);
  } else {
    v.unknown_reason = "no trace and no samples to judge";
    v.lead = "Nothing to judge";
  }
  return v;
}

// A host verdict from a CUPTI trace (no host ops) that the samples or stacks explain as
// data loading becomes input.
void refine_host_verdict(const EvidenceSet& ev, bool trace, const std::vector<Finding>& findings, Verdict& v) {
  // Host time a CUPTI trace cannot explain, while the samples show DataLoader workers
  // saturated: the host was waiting for batches.
  if (trace && v.bound == Category::kHost && ev.samples != nullptr && ev.trace->tl.cpu_ranges.size() == 0) {
    const bool loading = std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
      return f.category == Category::kInput && f.sources == std::vector<std::string>{"samples"};
    });
    if (loading) {
      v.bound = Category::kInput;
      v.lead += " (while the samples show the DataLoader workers saturated: the host waits for batches)";
    }
  }
  // The same when the Python stacks show the launching thread loading data in the gaps.
  if (trace && v.bound == Category::kHost && ev.stacks != nullptr && ev.stacks->decisive() &&
      ev.trace->tl.cpu_ranges.size() == 0 && ev.stacks->attr.idle_share(analyses::HostClass::kData) >= 0.5) {
    v.bound = Category::kInput;
    v.lead += " (the Python stacks show the launching thread loading data while the GPU waits)";
  }
}

// Each finding's estimate from its best remedy; then the findings ranked by severity, by
// the rank of their first remedy, by time share.
void estimate_and_rank_findings(Diagnosis& d) {
  for (Finding& f : d.findings) {
    std::optional<double> best, best_end;
    std::string best_id;
    for (const RemedyAdvice& r : d.remedies) {
      if (std::find(f.remedies.begin(), f.remedies.end(), r.id) == f.remedies.end() || !r.estimated_speedup) continue;
      if (!best || *r.estimated_speedup > *best) {
        best = r.estimated_speedup;
        best_end = r.speedup_range_end;
        best_id = r.id;
      }
    }
    if (best) {
      f.estimated_speedup = best;
      f.speedup_range_end = best_end;
      f.estimate_remedy = best_id;
      if (f.severity != Severity::kInfo || *best >= kMinHeadlineGain)
        f.severity = severity_for(f.time_share_pct, *best);
    }
  }
  auto rank = [&](const Finding& f) {
    for (size_t i = 0; i < d.remedies.size(); ++i) {
      if (std::find(f.remedies.begin(), f.remedies.end(), d.remedies[i].id) != f.remedies.end()) return i;
    }
    return d.remedies.size();
  };
  std::stable_sort(d.findings.begin(), d.findings.end(), [&](const Finding& x, const Finding& y) {
    if (x.severity != y.severity) return x.severity > y.severity;
    const size_t rx = rank(x), ry = rank(y);
    if (rx != ry) return rx < ry;
    return x.time_share_pct > y.time_share_pct;
  });
}

std::string lower_first(std::string t) {
  if (!t.empty() && t[0] >= 'A' && t[0] <= 'Z' && !(t.size() > 1 && t[1] >= 'A' && t[1] <= 'Z'))
    t[0] = static_cast<char>(t[0] - 'A' + 'a');
  return t;
}

// The finding the headline remedy removes, when the lead names another one that it does not
// remove: the sentence then says which finding the remedy is for. resnet_fake with 4 loader
// workers on the H200 led with `loss.backward()`'s host work and went on "load batches in
// DataLoader workers should give about 1.11x", as if the workers sped up the backward.
const Finding* other_finding_of_head(const Diagnosis& d, const std::string& lead_finding, const RemedyAdvice& head) {
  if (lead_finding.empty()) return nullptr;
  auto removes = [&](const Finding& f) {
    return std::find(f.remedies.begin(), f.remedies.end(), head.id) != f.remedies.end();
  };
  const auto led = std::find_if(d.findings.begin(), d.findings.end(),
                                [&](const Finding& f) { return f.id == lead_finding; });
  if (led == d.findings.end() || removes(*led)) return nullptr;
  const auto it = std::find_if(d.findings.begin(), d.findings.end(), removes);
  return it == d.findings.end() ? nullptr : &*it;
}

// The finding the headline sentence names for its remedy: another than the lead's
// (above), or, where the verdict has no lead finding, the remedy's own finding when it is
// of another category than the verdict (healthy_bf16: "busy computing 63%" went on "fuse
// elementwise chains ... 1.18x", a memory finding's remedy, without saying so).
const Finding* finding_named_for_head(const Diagnosis& d, const Verdict& v, const RemedyAdvice& head) {
  if (const Finding* f = other_finding_of_head(d, v.lead_finding, head)) return f;
  if (!v.lead_finding.empty()) return nullptr;
  const auto it = std::find_if(d.findings.begin(), d.findings.end(), [&](const Finding& f) {
    return std::find(f.remedies.begin(), f.remedies.end(), head.id) != f.remedies.end();
  });
  return it != d.findings.end() && it->category != d.bound ? &*it : nullptr;
}

// "about 2.41x", or "11.61-14.69x" where the estimate is a range (the recorder's cost).
// " in samples per second" for a remedy whose gain is not in step rate (RemedyInfo::gain_in).
std::string gain_unit(const RemedyAdvice& r) {
  const RemedyInfo* info = find_remedy(r.id);
  return info != nullptr && !info->gain_in.empty() ? " in " + std::string(info->gain_in) : "";
}

std::string gain_text(const RemedyAdvice& r) {
  const double x = r.estimated_speedup.value_or(0);
  if (!r.speedup_range_end) return fmt::format("about {:.2f}x", x);
  return fmt::format("{:.2f}-{:.2f}x", std::min(x, *r.speedup_range_end), std::max(x, *r.speedup_range_end));
}

// One sentence: the verdict's lead, then the headline remedy.
std::string summary_of(const Diagnosis& d, const Verdict& v, bool untrusted) {
  const std::string& lead = v.lead;
  const RemedyAdvice* head = nullptr;
  if (!d.remedies.empty() && gain(d.remedies.front()) >= kMinHeadlineGain &&
      d.remedies.front().estimate_from != "upper bound") {
    head = &d.remedies.front();
  }
  if (untrusted) head = nullptr;
  std::string s = untrusted
                      ? fmt::format("Too much of the input was lost to judge the run: the verdict is unknown ({})",
                                    d.unknown_reason)
                  : d.bound == Category::kUnknown && !d.unknown_reason.empty()
                      ? fmt::format("{}: the verdict is unknown ({})", lead, d.unknown_reason)
                      : lead;
  if (untrusted) {
    s += ".";
  } else if (head != nullptr) {
    const Finding* other = finding_named_for_head(d, v, *head);
    s += fmt::format("; {}{} ({}) should give {}{}.",
                     other ? fmt::format("for the {} finding, ", other->id) : std::string(), lower_first(head->title),
                     head->id, gain_text(*head), gain_unit(*head));
  } else if (!d.remedies.empty() && gain(d.remedies.front()) >= kMinHeadlineGain) {
    const Finding* other = finding_named_for_head(d, v, d.remedies.front());
    s += fmt::format("; {}{} ({}) would give up to {:.2f}x if all of that work left the critical path.",
                     other ? fmt::format("for the {} finding, ", other->id) : std::string(),
                     lower_first(d.remedies.front().title), d.remedies.front().id,
                     *d.remedies.front().estimated_speedup);
  } else if (d.bound == Category::kCompute || d.bound == Category::kMemory) {
    s += "; no remedy outside the kernels themselves is estimated to gain 1.05x or more.";
  } else {
    s += ".";
  }
  return s;
}

// A rule that fired and names a finding it leads a remedy for (Rule::lead_for): that
// remedy comes first in the finding's list.
void lead_remedies(std::vector<Finding>& findings) {
  for (const Finding& by : std::vector<Finding>(findings)) {
    const Rule* r = find_rule(by.id);
    if (r == nullptr || r->lead_for.empty()) continue;
    for (Finding& f : findings) {
      if (f.id != r->lead_for || std::find(f.remedies.begin(), f.remedies.end(), r->lead_remedy) != f.remedies.end())
        continue;
      f.remedies.insert(f.remedies.begin(), std::string(r->lead_remedy));
    }
  }
}

}  // namespace

Diagnosis diagnose(const EvidenceSet& ev) {
  Diagnosis d;
  const bool trace = ev.trace != nullptr && ev.trace->a.total().duration > 0;
  for (const Rule& r : all_rules()) {
    if (std::optional<Finding> f = rule_finding(r, ev, trace)) d.findings.push_back(std::move(*f));
  }
  lead_remedies(d.findings);

  Verdict v = choose_verdict(ev, trace, d.findings);
  refine_host_verdict(ev, trace, d.findings, v);
  d.bound = v.bound;
  d.confidence = v.bound == Category::kUnknown ? 0 : v.confidence;
  d.costs = std::move(v.costs);
  d.unknown_reason = v.unknown_reason;
  const bool untrusted = apply_cut_trace(ev, d) || apply_data_loss(ev, d);

  // Remedies, and each finding's estimate from its best remedy.
  d.remedies = remedies_of(d.findings, ev);
  estimate_and_rank_findings(d);
  if (untrusted) withhold_estimates(d);

  d.summary = summary_of(d, v, untrusted);
  return d;
}

Diagnosis diagnose(const timeline::Timeline& tl, const analyses::Analysis& a) {
  const TraceEvidence t{tl, a};
  EvidenceSet ev;
  ev.trace = &t;
  return diagnose(ev);
}

Diagnosis diagnose_samples(const samples::Recording& rec, const analyses::sampled::LiveAnalysis& la) {
  const SampleEvidence s{rec, la};
  EvidenceSet ev;
  ev.samples = &s;
  return diagnose(ev);
}

std::vector<Assessment> assess_machine(const MachineEvidence& m) {
  std::vector<Assessment> out;
  for (const Rule& r : all_rules()) {
    if (r.machine == nullptr) continue;
    for (Assessment& a : r.machine(m)) out.push_back(std::move(a));
  }
  return out;
}

std::vector<machine::BenchCause> bench_causes(machine::BenchGroup group, const machine::Measurement& m,
                                              const machine::GpuProfile& gpu, const machine::HostInfo& host) {
  const BenchEvidence ev{group, m, gpu, host};
  std::vector<machine::BenchCause> out;
  for (const Rule& r : all_rules()) {
    if (r.bench == nullptr) continue;
    if (auto text = r.bench(ev)) out.push_back({std::string(r.id), std::move(*text)});
  }
  return out;
}

std::optional<Finding> evaluate_rule(const Rule& r, const EvidenceSet& ev) {
  return rule_finding(r, ev, ev.trace != nullptr && ev.trace->a.total().duration > 0);
}

}  // namespace chokepoint::rules
