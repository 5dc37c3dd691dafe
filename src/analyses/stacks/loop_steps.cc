#include "analyses/stacks/loop_steps.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace chokepoint::analyses {

namespace {

// A candidate loop frame must hold the thread this share of its sampled time.
constexpr double kMinCoverage = 0.10;
// Counted intervals needed to call it a loop.
constexpr int64_t kMinSteps = 8;
// An interval holds k iterations when it is within this share of k periods (plus one
// sampling interval: where in its interval each wrap was seen).
constexpr double kTolerance = 0.25;
constexpr int kMaxPerInterval = 3;
// Half-period intervals this common (against whole ones) mean the period is half.
constexpr double kHalfShare = 0.6;
// Samples a step below which half the period cannot be told from it.
constexpr double kDecidableSamples = 2.5;

struct Fit {
  double period = 0, counted = 0;
  int64_t steps = 0, other = 0, singles = 0;
  std::vector<double> per_step;
  bool ambiguous = false;       // as well explained by half the period
  int64_t waited = 0;           // iterations longer than the period, waiting at the header
  std::vector<double> regular;  // the iterations that fit the period
};

// Whether intervals between wraps fall near 0.5, 1.5, 2.5 periods (as they do when the
// true period is half) about as often as near whole periods (noise and the odd line that
// goes back up put some there: 5-36% as many on the H200 programs; 120% when the period
// read was twice the true one).
bool half_periods_common(const std::vector<double>& gaps, double period) {
  int whole = 0, half = 0;
  for (double g : gaps) {
    const double x = g / period;
    if (x < 0.3 || x > 3.3) continue;
    const double frac = x - std::floor(x);
    half += std::abs(frac - 0.5) <= 0.15;
    whole += frac <= 0.15 || frac >= 0.85;
  }
  return whole > 0 && half >= kHalfShare * whole;
}

// The time between two wraps of the loop's line: whether the thread left the loop's frame
// in it, and how long it spent at the loop's header (the `for` line: the next batch).
struct Gap {
  double ns = 0;
  bool left = false;
  double header_ns = 0;
};

// An interval longer than a period that spent most of its extra time at the loop's header,
// over what an interval usually spends there, waited for its batch: one iteration however
// long (a loader that keeps up only some of the time: resnet_fake with 4 workers ran 19-130
// ms, its long ones at `for ... in enumerate(train_loader)`). Missed wraps add a whole
// iteration but only its later lines (the first iteration's header is the interval's own),
// so they are not taken for one; and the extra time must hold several samples, or a sample
// or two at the header by chance would do (lstm_lm at 3.5 samples a step: +10% with one).
constexpr double kHeaderShare = 0.6;
// Samples a step from which a single iteration's time is known to an eighth of it.
constexpr double kDenseSamples = 8;
constexpr double kWaitSamples = 4;

// Intervals between wraps against a period `t0`, refined three times. Intervals much
// shorter than a period (a line that goes back up inside the body: an inner loop, a
// `with` block's exit) are merged into the next. An interval in which the thread left the
// loop's frame (the function returned and was called again: an epoch's end, evaluation
// and checkpoints between epochs) is no iteration.
Fit fit_period(const std::vector<Gap>& gaps, double header_ns, double t0, double dt) {
  Fit f;
  f.period = t0;
  for (int round = 0; round < 3 && f.period > 0; ++round) {
    Fit n;
    Gap acc;
    double regular = 0;  // the counted time of intervals that fit the period
    int64_t regular_steps = 0;
    for (const Gap& g : gaps) {
      acc.ns += g.ns;
      acc.left |= g.left;
      acc.header_ns += g.header_ns;
      if (acc.ns < 0.5 * f.period) continue;
      const int k = static_cast<int>(std::lround(acc.ns / f.period));
      const double tol = kTolerance * f.period + dt;
      if (acc.left) {
        ++n.other;
      } else if (const double extra = acc.ns - f.period; acc.ns > f.period + tol && extra >= kWaitSamples * dt &&
                                                         acc.header_ns - header_ns >= kHeaderShare * extra) {
        n.counted += acc.ns;
        ++n.steps;
        ++n.waited;
        n.per_step.push_back(acc.ns);
      } else if (k >= 1 && k <= kMaxPerInterval && std::abs(acc.ns - k * f.period) <= tol) {
        n.counted += acc.ns;
        n.steps += k;
        n.singles += k == 1;
        n.per_step.push_back(acc.ns / k);
        regular += acc.ns;
        regular_steps += k;
        n.regular.push_back(acc.ns / k);
      } else if (f.period >= kDenseSamples * dt && acc.ns < 1.5 * f.period) {
        // Sampled densely, a wrap is placed to within an eighth of a step: an interval off
        // the period by more than the tolerance but under one and a half periods is one
        // iteration that ran slower or faster (two would each be under 0.75 of a period).
        n.counted += acc.ns;
        ++n.steps;
        n.per_step.push_back(acc.ns);
      } else {
        ++n.other;
      }
      acc = Gap{};
    }
    n.period = regular_steps > 0 ? regular / static_cast<double>(regular_steps) : 0;
    f = std::move(n);
  }
  return f;
}

using Segments = std::vector<const samples::PyStackSegment*>;
using Key = std::tuple<std::string, std::string, size_t>;  // file, function, depth from the outermost

// A process's main thread: training loops run there; threads the job starts (logging,
// metrics, prefetching) loop too, and may hold more sampled time in the job's frames.
bool is_main_thread(const samples::PyThread& t) { return t.name == "MainThread" || (t.tid != 0 && t.tid == t.pid); }

// The segments of the main thread with the most time in the job's own frames, in time
// order; another thread's only when no main thread has any. A metrics thread's 20 ms
// loop read as the step beside a 3 ms training loop on the H200 (the GIL pair at
// --rival-duty 0.1, tests/data/pairs/gil_threads_gpu.py: py-spy sampled it longer in the
// job's frames than the main thread).
Segments main_thread_segments(const samples::PyStacks& s) {
  auto own = [&](int32_t frame) { return !samples::is_library_file(s.frames[frame].file); };
  std::vector<double> own_time(s.threads.size(), 0.0);
  for (const auto& g : s.segments) {
    if (g.thread < 0 || static_cast<size_t>(g.thread) >= s.threads.size()) continue;
    const auto& st = s.stacks[g.stack];
    if (std::any_of(st.begin(), st.end(), own)) own_time[g.thread] += static_cast<double>(g.end_ns - g.start_ns);
  }
  Segments seq;
  int32_t thread = -1;
  for (int pass = 0; pass < 2 && thread < 0; ++pass) {
    double best = 0;
    for (size_t i = 0; i < own_time.size(); ++i) {
      if (pass == 0 && !is_main_thread(s.threads[i])) continue;
      if (own_time[i] > best) best = own_time[i], thread = static_cast<int32_t>(i);
    }
  }
  if (thread < 0) return seq;
  for (const auto& g : s.segments) {
    if (g.thread == thread) seq.push_back(&g);
  }
  std::sort(seq.begin(), seq.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  return seq;
}

// The job's frames and the time each holds the thread.
std::map<Key, double> candidate_frames(const samples::PyStacks& s, const Segments& seq) {
  std::map<Key, double> cands;
  for (const auto* g : seq) {
    const auto& st = s.stacks[g->stack];
    for (size_t i = 0; i < st.size(); ++i) {
      const auto& f = s.frames[st[i]];
      if (samples::is_library_file(f.file)) continue;
      cands[{f.file, f.function, st.size() - 1 - i}] += static_cast<double>(g->end_ns - g->start_ns);
    }
  }
  return cands;
}

// One sampling interval: where between two samples a wrap happened is not known.
double sampling_interval(const samples::PyStacks& s, const Segments& seq) {
  if (s.rate_hz > 0) return 1e9 / s.rate_hz;
  std::vector<double> d;
  for (const auto* g : seq) d.push_back(static_cast<double>(g->end_ns - g->start_ns));
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return d[d.size() / 2];
}

// The frame's line in each sample (-1 where the frame is not there), and the samples the
// line goes back up on.
struct Walk {
  struct Sample {
    int64_t start_ns, ns;
    int32_t line;
  };
  std::vector<Sample> samples;
  std::vector<size_t> wraps;  // the sample each wrap lands on
  int64_t ups = 0;            // the line going down the body
};

Walk walk_frame(const samples::PyStacks& s, const Segments& seq, const Key& key) {
  const std::string& file = std::get<0>(key);
  const std::string& function = std::get<1>(key);
  const size_t depth = std::get<2>(key);
  auto line_of = [&](const std::vector<int32_t>& st) -> int32_t {
    if (st.size() <= depth) return -1;
    const auto& f = s.frames[st[st.size() - 1 - depth]];
    return f.file == file && f.function == function ? f.line : -1;
  };
  // The outermost frame of the stacks the loop is in. A stack without the loop that starts
  // there left it (the function returned: an epoch's end, evaluation between epochs); one
  // that starts elsewhere is cut short (py-spy could not unwind it all: 6 of resnet_200's
  // 1,300 samples) and says nothing: it neither leaves the loop nor breaks a wrap.
  const samples::PyFrame* root = nullptr;
  for (const auto* g : seq) {
    if (const auto& st = s.stacks[g->stack]; line_of(st) >= 0) {
      root = &s.frames[st.back()];
      break;
    }
  }
  Walk w;
  int32_t prev = -1;
  for (const auto* g : seq) {
    const auto& st = s.stacks[g->stack];
    if (st.empty() || root == nullptr) continue;
    const int32_t line = line_of(st);
    const auto& outer = s.frames[st.back()];
    if (line < 0 && (outer.file != root->file || outer.function != root->function)) continue;
    if (line >= 0 && prev >= 0 && line < prev) w.wraps.push_back(w.samples.size());
    w.ups += line >= 0 && prev >= 0 && line > prev;
    prev = line;
    w.samples.push_back({g->start_ns, g->end_ns - g->start_ns, line});
  }
  return w;
}

// The intervals between wraps. The loop's header: the first line of the body that wraps
// come back to (at least 5% of them), where a `for` takes its next batch.
std::vector<Gap> gaps_of(const Walk& w) {
  std::map<int32_t, int64_t> landing;
  for (size_t i : w.wraps) ++landing[w.samples[i].line];
  int32_t header = -1;
  for (const auto& [line, n] : landing) {
    if (n * 20 >= static_cast<int64_t>(w.wraps.size())) {
      header = line;
      break;
    }
  }
  std::vector<Gap> gaps;
  for (size_t i = 1; i < w.wraps.size(); ++i) {
    Gap g;
    g.ns = static_cast<double>(w.samples[w.wraps[i]].start_ns - w.samples[w.wraps[i - 1]].start_ns);
    for (size_t j = w.wraps[i - 1]; j < w.wraps[i]; ++j) {
      g.left |= w.samples[j].line < 0;
      if (w.samples[j].line == header) g.header_ns += static_cast<double>(w.samples[j].ns);
    }
    gaps.push_back(g);
  }
  return gaps;
}

// The period of one candidate frame's loop (no steps when it is not a loop).
Fit fit_frame(const samples::PyStacks& s, const Segments& seq, const Key& key, double dt) {
  const Walk w = walk_frame(s, seq, key);
  if (static_cast<int64_t>(w.wraps.size()) < kMinSteps) return Fit{};
  const std::vector<Gap> gaps = gaps_of(w);
  std::vector<double> sorted;
  for (const Gap& g : gaps) sorted.push_back(g.header_ns);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double header_ns = sorted[sorted.size() / 2];  // an interval's usual time at the header
  sorted.clear();
  for (const Gap& g : gaps) sorted.push_back(g.ns);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  // Wraps missed (a line as long as the sampling interval spans one) make the median
  // interval two or three periods: try those too, the longest period that explains as
  // much and has intervals of one iteration.
  Fit chosen;
  for (int div = 1; div <= kMaxPerInterval; ++div) {
    Fit f = fit_period(gaps, header_ns, median / div, dt);
    if (f.steps == 0 || f.singles * 7 < static_cast<int64_t>(f.per_step.size())) continue;
    if (chosen.steps == 0 || f.counted > chosen.counted * 1.02) chosen = std::move(f);
  }
  // Wraps seen at one and a half periods as often as at whole ones: the period is half
  // this (every other wrap missed). Taken when the samples are fast enough to see it;
  // otherwise the count cannot be trusted.
  if (chosen.steps > 0 && half_periods_common(sorted, chosen.period)) {
    Fit half = fit_period(gaps, header_ns, chosen.period / 2, dt);
    if (chosen.period / 2 >= kDecidableSamples * dt && half.steps > 0 && !half_periods_common(sorted, half.period)) {
      chosen = std::move(half);
    } else {
      chosen.ambiguous = true;
    }
  }
  // A loop sampled slower than it runs can seem to run backwards (each sample a little
  // earlier in the body than the last): the line then goes up less often than it wraps.
  // A loop running forwards goes up at least once per wrap.
  if (w.ups < static_cast<int64_t>(w.wraps.size())) chosen.ambiguous = true;
  return chosen;
}

}  // namespace

double LoopSteps::rel_se() const {
  const auto& v = fitted_ns.empty() ? per_step_ns : fitted_ns;
  const auto n = static_cast<double>(v.size());
  if (n < 2) return 1;
  double mean = 0, var = 0;
  for (double x : v) mean += x / n;
  if (mean <= 0) return 1;
  for (double x : v) var += (x - mean) * (x - mean) / (n - 1);
  return std::sqrt(var / n) / mean;
}

double LoopSteps::median_ns() const {
  if (per_step_ns.empty()) return 0;
  std::vector<double> v = per_step_ns;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

double LoopSteps::drift() const {
  if (part_step_ns.size() < 2) return 1;
  const auto [lo, hi] = std::minmax_element(part_step_ns.begin(), part_step_ns.end());
  return *lo > 0 ? *hi / *lo : 1;
}

bool LoopSteps::sure() const {
  return found && samples_per_step >= kSureSamplesPerStep && !ambiguous && steps >= kSureSteps &&
         rel_se() <= kSureRelSe;
}

LoopSteps find_loop_steps(const samples::PyStacks& s) {
  LoopSteps out;
  out.rate_hz = s.rate_hz;
  const Segments seq = main_thread_segments(s);
  if (seq.empty()) {
    out.why_not = "no sampled stack is in the job's own code";
    return out;
  }
  const double span = static_cast<double>(seq.back()->end_ns - seq.front()->start_ns);
  const double dt = sampling_interval(s, seq);
  Fit best;
  const Key* best_key = nullptr;
  const auto cands = candidate_frames(s, seq);
  for (const auto& [key, covered] : cands) {
    if (span <= 0 || covered < kMinCoverage * span) continue;
    Fit chosen = fit_frame(s, seq, key, dt);
    if (chosen.steps >= kMinSteps && chosen.counted > best.counted) {
      best = std::move(chosen);
      best_key = &key;
    }
  }
  if (best_key == nullptr) {
    out.why_not = fmt::format("no frame of the job's code goes round a loop at least {} times in the samples",
                              kMinSteps);
    return out;
  }
  out.found = true;
  out.step_ns = best.counted / static_cast<double>(best.steps);
  out.steps = best.steps;
  out.other = best.other;
  out.counted_ns = best.counted;
  out.per_step_ns = std::move(best.per_step);
  out.file = std::get<0>(*best_key);
  out.function = std::get<1>(*best_key);
  out.samples_per_step = best.period / dt;
  out.ambiguous = best.ambiguous;
  out.waited = best.waited;
  out.fitted_ns = std::move(best.regular);
  if (out.rate_hz <= 0) out.rate_hz = 1e9 / dt;
  return out;
}

LoopSteps combine_loop_steps(const std::vector<LoopSteps>& parts) {
  std::map<std::pair<std::string, std::string>, int64_t> votes;
  for (const auto& p : parts) {
    if (p.found) votes[{p.file, p.function}] += p.steps;
  }
  LoopSteps out;
  if (votes.empty()) {
    for (const auto& p : parts) {
      if (!p.why_not.empty()) out.why_not = p.why_not;
    }
    if (out.why_not.empty()) out.why_not = "no Python stack samples";
    return out;
  }
  const auto loop = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) {
                      return a.second < b.second;
                    })->first;
  for (const auto& p : parts) {
    if (!p.found || p.file != loop.first || p.function != loop.second) continue;
    out.found = true;
    out.file = p.file;
    out.function = p.function;
    out.steps += p.steps;
    out.other += p.other;
    out.counted_ns += p.counted_ns;
    out.per_step_ns.insert(out.per_step_ns.end(), p.per_step_ns.begin(), p.per_step_ns.end());
    out.rate_hz = std::max(out.rate_hz, p.rate_hz);
    out.ambiguous |= p.ambiguous;
    out.waited += p.waited;
    out.fitted_ns.insert(out.fitted_ns.end(), p.fitted_ns.begin(), p.fitted_ns.end());
    if (p.steps >= kMinSteps) out.part_step_ns.push_back(p.step_ns);
  }
  out.step_ns = out.counted_ns / static_cast<double>(out.steps);
  out.samples_per_step = out.step_ns * out.rate_hz / 1e9;
  return out;
}

std::string loop_steps_source(const LoopSteps& l) {
  std::string file = l.file;
  if (const auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  std::string s = fmt::format("iterations of the loop in {} {}() counted in Python stack samples at {:.0f} Hz", file,
                              l.function, l.rate_hz);
  if (l.other > 0) s += fmt::format("; {} longer stretches left out (evaluation, checkpoints, warm-up)", l.other);
  // An ambiguous count's bursts may each have locked onto a different fraction of the
  // period, so their means disagreeing says nothing about the job (lstm_lm at 3.6 samples
  // a step on the H100: 6.52 and 7.97 ms for a job that ran 6.24 ms throughout).
  if (!l.ambiguous && l.drift() > kDriftRatio) {
    const auto [lo, hi] = std::minmax_element(l.part_step_ns.begin(), l.part_step_ns.end());
    s += fmt::format(
        "; the step drifted during the run: the bursts' own means ran {:.2f} to {:.2f} ms, so the mean is that "
        "of the stretches sampled",
        *lo / 1e6, *hi / 1e6);
  }
  if (l.ambiguous) {
    s += fmt::format(
        "; at {:.1f} samples a step the count is not sure (the step may be {:.2f} ms or a fraction of "
        "it): sample faster with --stack-burst",
        l.samples_per_step, l.step_ns / 1e6);
  } else if (l.samples_per_step < kSureSamplesPerStep) {
    s += fmt::format("; only {:.1f} samples a step, so iterations may be missed: the step may be shorter",
                     l.samples_per_step);
  } else if (l.steps < kSureSteps) {
    s += fmt::format("; {} iterations are too few to be sure of their mean", l.steps);
  } else if (!l.sure()) {
    s += fmt::format("; {} iterations that vary too much to be sure of their mean (standard error {:.1f}%)", l.steps,
                     100 * l.rel_se());
  }
  return s;
}

}  // namespace chokepoint::analyses
