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
  bool ambiguous = false;  // as well explained by half the period
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

// Intervals between wraps against a period `t0`, refined three times. Intervals much
// shorter than a period (a line that goes back up inside the body: an inner loop, a
// `with` block's exit) are merged into the next.
Fit fit_period(const std::vector<double>& gaps, double t0, double dt) {
  Fit f;
  f.period = t0;
  for (int round = 0; round < 3 && f.period > 0; ++round) {
    Fit n;
    double acc = 0;
    for (double g : gaps) {
      acc += g;
      if (acc < 0.5 * f.period) continue;
      const int k = static_cast<int>(std::lround(acc / f.period));
      if (k >= 1 && k <= kMaxPerInterval && std::abs(acc - k * f.period) <= kTolerance * f.period + dt) {
        n.counted += acc;
        n.steps += k;
        n.singles += k == 1;
        n.per_step.push_back(acc / k);
      } else {
        ++n.other;
      }
      acc = 0;
    }
    n.period = n.steps > 0 ? n.counted / static_cast<double>(n.steps) : 0;
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

// The period of one candidate frame's loop (no steps when it is not a loop).
Fit fit_frame(const samples::PyStacks& s, const Segments& seq, const Key& key, double dt) {
  const auto& [file, function, depth] = key;
  // The frame's line in each sample (-1 where the frame is not there).
  std::vector<int64_t> wraps;
  int64_t ups = 0;  // the line going down the body
  int32_t prev = -1;
  for (const auto* g : seq) {
    const auto& st = s.stacks[g->stack];
    int32_t line = -1;
    if (st.size() > depth) {
      const auto& f = s.frames[st[st.size() - 1 - depth]];
      if (f.file == file && f.function == function) line = f.line;
    }
    if (line >= 0 && prev >= 0 && line < prev) wraps.push_back(g->start_ns);
    ups += line >= 0 && prev >= 0 && line > prev;
    prev = line;
  }
  if (static_cast<int64_t>(wraps.size()) < kMinSteps) return Fit{};
  std::vector<double> gaps;
  for (size_t i = 1; i < wraps.size(); ++i) gaps.push_back(static_cast<double>(wraps[i] - wraps[i - 1]));
  std::vector<double> sorted = gaps;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  // Wraps missed (a line as long as the sampling interval spans one) make the median
  // interval two or three periods: try those too, the longest period that explains as
  // much and has intervals of one iteration.
  Fit chosen;
  for (int div = 1; div <= kMaxPerInterval; ++div) {
    Fit f = fit_period(gaps, median / div, dt);
    if (f.steps == 0 || f.singles * 7 < static_cast<int64_t>(f.per_step.size())) continue;
    if (chosen.steps == 0 || f.counted > chosen.counted * 1.02) chosen = std::move(f);
  }
  // Wraps seen at one and a half periods as often as at whole ones: the period is half
  // this (every other wrap missed). Taken when the samples are fast enough to see it;
  // otherwise the count cannot be trusted.
  if (chosen.steps > 0 && half_periods_common(gaps, chosen.period)) {
    Fit half = fit_period(gaps, chosen.period / 2, dt);
    if (chosen.period / 2 >= kDecidableSamples * dt && half.steps > 0 && !half_periods_common(gaps, half.period)) {
      chosen = std::move(half);
    } else {
      chosen.ambiguous = true;
    }
  }
  // A loop sampled slower than it runs can seem to run backwards (each sample a little
  // earlier in the body than the last): the line then goes up less often than it wraps.
  // A loop running forwards goes up at least once per wrap.
  if (ups < static_cast<int64_t>(wraps.size())) chosen.ambiguous = true;
  return chosen;
}

}  // namespace

double LoopSteps::rel_se() const {
  const auto n = static_cast<double>(per_step_ns.size());
  if (n < 2) return 1;
  double mean = 0, var = 0;
  for (double x : per_step_ns) mean += x / n;
  if (mean <= 0) return 1;
  for (double x : per_step_ns) var += (x - mean) * (x - mean) / (n - 1);
  return std::sqrt(var / n) / mean;
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
  out.step_ns = best.period;
  out.steps = best.steps;
  out.other = best.other;
  out.counted_ns = best.counted;
  out.per_step_ns = std::move(best.per_step);
  out.file = std::get<0>(*best_key);
  out.function = std::get<1>(*best_key);
  out.samples_per_step = best.period / dt;
  out.ambiguous = best.ambiguous;
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
