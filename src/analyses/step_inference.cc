#include "analyses/step_inference.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

namespace chokepoint::analyses {

using timeline::Timeline;

namespace {

constexpr double kMinMatch = 0.85;  // share of ops that must repeat one period later
constexpr int64_t kMinCycles = 3;
constexpr int64_t kMinPeriod = 2;             // one op repeated is a loop, not an iteration
constexpr size_t kMatchSamples = 200000;      // positions compared per candidate period
constexpr double kNotable = 1.5;              // a boundary's pause: 1.5x the median pause ...
constexpr TimeNs kMinBoundaryPause = 20'000;  // ... and at least 20 us
constexpr size_t kStrengthCycles = 256;       // cycles sampled (or followed from the start) per phase
constexpr size_t kPhaseCycles = 3;            // phases with a notable pause in the first 3 cycles ...
constexpr size_t kMaxPhases = 64;             // ... at most 64 of them
constexpr int64_t kMaxMultiples = 4096;       // multiples of the base period tried

// Median distance between consecutive occurrences of each name seen >= 3 times: the
// candidate periods, ascending, without repeats.
std::vector<int64_t> candidate_periods(const std::vector<uint32_t>& tok, size_t distinct) {
  std::vector<int64_t> last(distinct, -1);
  std::vector<std::vector<int64_t>> gaps(distinct);
  for (size_t i = 0; i < tok.size(); ++i) {
    if (last[tok[i]] >= 0) gaps[tok[i]].push_back(static_cast<int64_t>(i) - last[tok[i]]);
    last[tok[i]] = static_cast<int64_t>(i);
  }
  std::vector<int64_t> out;
  const int64_t max_period = static_cast<int64_t>(tok.size()) / kMinCycles;
  for (auto& g : gaps) {
    if (g.size() + 1 < static_cast<size_t>(kMinCycles)) continue;
    auto mid = g.begin() + static_cast<std::ptrdiff_t>(g.size() / 2);
    std::nth_element(g.begin(), mid, g.end());
    if (*mid >= 1 && *mid <= max_period) out.push_back(*mid);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Share of positions i with tok[i] == tok[i + p], on at most kMatchSamples evenly spaced i.
double self_match(const std::vector<uint32_t>& tok, int64_t p) {
  const size_t n = tok.size() - static_cast<size_t>(p);
  const size_t stride = std::max<size_t>(1, n / kMatchSamples);
  size_t same = 0, seen = 0;
  for (size_t i = 0; i < n; i += stride, ++seen) same += tok[i] == tok[i + static_cast<size_t>(p)];
  return seen ? static_cast<double>(same) / static_cast<double>(seen) : 0.0;
}

// Share of positions i whose op is within a few ops of i + p (p/64, 1 to 16): ops issued
// only every N iterations (a logging step's .item() copy, a progress meter's reductions
// every 10th) shift the rest of their iteration, which the exact match counts as misses.
double tolerant_match(const std::vector<uint32_t>& tok, int64_t p) {
  const size_t k = static_cast<size_t>(std::clamp<int64_t>(p / 64, 1, 16));
  if (p < 2 || tok.size() < static_cast<size_t>(p) + k + 1) return 0.0;
  const size_t n = tok.size() - static_cast<size_t>(p) - k;
  const size_t stride = std::max<size_t>(1, n / kMatchSamples);
  size_t same = 0, seen = 0;
  for (size_t i = 0; i < n; i += stride, ++seen) {
    const size_t j = i + static_cast<size_t>(p);
    bool hit = false;
    for (size_t d = j - std::min(k, j); d <= j + k && !hit; ++d) hit = tok[i] == tok[d];
    same += hit;
  }
  return seen ? static_cast<double>(same) / static_cast<double>(seen) : 0.0;
}

// A period the sequence repeats with: 85% of ops equal one period later, or, where ops
// come and go every few iterations, 60% equal and 85% within a few ops of it.
constexpr double kMinExactWithSlack = 0.60, kMinTolerant = 0.85;
bool repeats(const std::vector<uint32_t>& tok, int64_t p, double* exact) {
  *exact = self_match(tok, p);
  return *exact >= kMinMatch || (*exact >= kMinExactWithSlack && tolerant_match(tok, p) >= kMinTolerant);
}

struct Sequence {
  std::vector<uint32_t> rows;  // GpuOps rows in the order the GPU ran them
  std::vector<TimeNs> issue;   // launch call start of each, -1 unknown
  std::vector<uint32_t> tok;   // dense name id of each
};

// The ops of the source's busiest stream, in the order they ran. One stream runs its ops
// in issue order, so its sequence is the program's own; ops of other streams (NCCL,
// copies on a side stream) interleave differently from one iteration to the next. GPU
// order rather than launch order also covers ops whose launch was not recorded (driver
// API launches: cuBLASLt, cuDNN, Triton), which would otherwise sit out of place.
Sequence stream_sequence(const Timeline& tl, const TimelineIndex& ix, const std::vector<uint32_t>& rows) {
  const auto& g = tl.gpu_ops;
  std::map<std::pair<int16_t, int32_t>, size_t> per_stream;
  for (uint32_t r : rows) ++per_stream[{g.device[r], g.stream[r]}];
  const auto busiest = std::max_element(per_stream.begin(), per_stream.end(), [](const auto& a, const auto& b) {
                         return a.second < b.second;
                       })->first;
  Sequence s;
  std::unordered_map<timeline::StringId, uint32_t> dense;
  for (uint32_t r : rows) {  // rows are in GPU start order
    if (std::pair{g.device[r], g.stream[r]} != busiest) continue;
    s.rows.push_back(r);
    s.issue.push_back(ix.launch_row[r] >= 0 ? tl.runtime_calls.start[ix.launch_row[r]] : -1);
    s.tok.push_back(dense.emplace(g.name[r], static_cast<uint32_t>(dense.size())).first->second);
  }
  return s;
}

// All the source's ops in the order the CPU issued them (ops whose launch was not recorded
// take their GPU start): one thread issuing to several streams (cuDNN's RNNs spread one
// call over a dozen streams) keeps its order every iteration, while each stream's own
// share of it need not repeat with the iteration.
Sequence issue_sequence(const Timeline& tl, const TimelineIndex& ix, const std::vector<uint32_t>& rows) {
  const auto& g = tl.gpu_ops;
  std::vector<std::pair<TimeNs, uint32_t>> order;
  order.reserve(rows.size());
  for (uint32_t r : rows) {
    const int32_t lr = ix.launch_row[r];
    order.emplace_back(lr >= 0 ? tl.runtime_calls.start[lr] : g.start[r], r);
  }
  std::stable_sort(order.begin(), order.end());
  Sequence s;
  std::unordered_map<timeline::StringId, uint32_t> dense;
  for (const auto& [t, r] : order) {
    s.rows.push_back(r);
    s.issue.push_back(ix.launch_row[r] >= 0 ? t : -1);
    s.tok.push_back(dense.emplace(g.name[r], static_cast<uint32_t>(dense.size())).first->second);
  }
  return s;
}

// What precedes each op: the CPU's pause (time since the previous op's launch: data
// loading, the optimizer's host work, a sync), when both launches are known, plus the
// GPU's idle time before it. pause[0] is 0.
std::vector<TimeNs> pauses(const Timeline& tl, const Sequence& s) {
  const auto& g = tl.gpu_ops;
  std::vector<TimeNs> out(s.rows.size(), 0);
  TimeNs busy_until = g.end[s.rows[0]];
  for (size_t j = 1; j < s.rows.size(); ++j) {
    const uint32_t r = s.rows[j];
    const TimeNs cpu = s.issue[j] >= 0 && s.issue[j - 1] >= 0 ? std::max<TimeNs>(0, s.issue[j] - s.issue[j - 1]) : 0;
    out[j] = cpu + std::max<TimeNs>(0, g.start[r] - busy_until);
    busy_until = std::max(busy_until, g.end[r]);
  }
  return out;
}

TimeNs median_of(std::vector<TimeNs> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The value below which a third of `v` lies.
TimeNs lower_tercile(std::vector<TimeNs>& v) {
  if (v.empty()) return 0;
  auto at = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 3);
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

// Pauses long enough to be a boundary, and the positions that have one.
struct Pauses {
  std::vector<TimeNs> before;  // per op (pauses())
  TimeNs typical = 0;          // median
  TimeNs notable = 0;          // kNotable x typical, at least kMinBoundaryPause
  std::vector<size_t> notable_at;
};

// First op of each cycle: every p ops from `phase`, re-synchronized on the phase op's name
// when an iteration issued an op more or less (the nearest occurrence within p/4).
std::vector<size_t> cycle_starts(const Sequence& s, int64_t p, int64_t phase, size_t max_cycles = SIZE_MAX) {
  std::vector<size_t> starts;
  const size_t n = s.tok.size();
  const uint32_t anchor = s.tok[static_cast<size_t>(phase)];
  const size_t slack = static_cast<size_t>(std::max<int64_t>(1, p / 4));
  size_t b = static_cast<size_t>(phase);
  while (b < n && starts.size() < max_cycles) {
    starts.push_back(b);
    size_t next = b + static_cast<size_t>(p);
    if (next >= n) break;
    if (s.tok[next] != anchor) {
      size_t found = n;
      for (size_t d = 1; d <= slack && found == n; ++d) {
        if (next + d < n && s.tok[next + d] == anchor) found = next + d;
        else if (next - d > b && s.tok[next - d] == anchor) found = next - d;
      }
      if (found != n) next = found;
    }
    b = next;
  }
  return starts;
}

// How clearly period p has a boundary, and where: for a phase r, the pause two thirds of
// the cycles have at least before their first op (cycles found from r as cycle_starts()
// finds them, so an op that comes every few iterations does not move the phase off); the
// largest over the phases that have a notable pause in one of the first cycles (only
// those can win). A pause every other or every tenth cycle (logging, a sync every few
// steps) is no boundary of p.
std::pair<TimeNs, int64_t> boundary_strength(const Sequence& s, const Pauses& ps, int64_t p) {
  const size_t n = ps.before.size(), step = static_cast<size_t>(p);
  std::vector<size_t> phases;
  for (size_t j : ps.notable_at) {
    if (j >= kPhaseCycles * step || phases.size() >= kMaxPhases) break;
    if (std::find(phases.begin(), phases.end(), j % step) == phases.end()) phases.push_back(j % step);
  }
  std::pair<TimeNs, int64_t> best{0, 0};
  std::vector<TimeNs> at;
  const size_t stride = std::max<size_t>(1, n / step / kStrengthCycles);
  for (size_t r : phases) {
    // Every p ops exactly from r (a loop whose every iteration issues the same ops) ...
    at.clear();
    for (size_t j = r == 0 ? step : r; j < n; j += step * stride) at.push_back(ps.before[j]);
    TimeNs t = lower_tercile(at);
    // ... or re-synchronized on r's op where an iteration issued a few more (logging).
    at.clear();
    const std::vector<size_t> starts = cycle_starts(s, p, static_cast<int64_t>(r), kStrengthCycles);
    for (size_t c = r == 0 ? 1 : 0; c < starts.size(); ++c) at.push_back(ps.before[starts[c]]);
    t = std::max(t, lower_tercile(at));
    if (t > best.first) best = {t, static_cast<int64_t>(r)};
  }
  return best;
}

// The sequence's own period: the shortest at which the names repeat (0: none), with its
// exact match in `match`.
int64_t base_period(const Sequence& s, size_t distinct, double* match) {
  for (int64_t p : candidate_periods(s.tok, distinct)) {
    if (repeats(s.tok, p, match)) return p;
  }
  return 0;
}

// The pauses before each op, their median and the positions of the notable ones.
Pauses pause_profile(const Timeline& tl, const Sequence& s) {
  Pauses ps;
  ps.before = pauses(tl, s);
  ps.typical = median_of(std::vector<TimeNs>(ps.before.begin() + 1, ps.before.end()));
  ps.notable = std::max<TimeNs>(static_cast<TimeNs>(kNotable * static_cast<double>(ps.typical)), kMinBoundaryPause);
  for (size_t j = 1; j < ps.before.size(); ++j) {
    if (ps.before[j] >= ps.notable) ps.notable_at.push_back(j);
  }
  return ps;
}

// The iteration's length in ops and the phase of its first op ({0, 0}: none found).
// An iteration is a whole number of base periods (the MLP of 60 identical layers repeats
// every 2 ops, its step every 120): the names cannot tell, the pauses can. The base
// period is the iteration when its cycles have a clear boundary (a pause at one phase
// well above the typical pause); otherwise the shortest multiple that has one is.
std::pair<int64_t, int64_t> iteration_period(const Sequence& s, const Pauses& ps, int64_t base, size_t distinct) {
  const int64_t max_period = static_cast<int64_t>(s.tok.size()) / kMinCycles;
  // Iteration lengths to try, shortest first: the multiples of the base period, and the
  // distances between a name's occurrences that also repeat (a name issued once per
  // iteration gives its length exactly, which need not be a multiple of a layer's).
  std::vector<int64_t> tries;
  for (int64_t p = base, n = 0; p <= max_period && n < kMaxMultiples; p += base, ++n) tries.push_back(p);
  for (int64_t p : candidate_periods(s.tok, distinct)) {
    if (p > base && p % base != 0) tries.push_back(p);
  }
  std::sort(tries.begin(), tries.end());
  for (int64_t p : tries) {
    double exact = 0;
    if (p != base && !repeats(s.tok, p, &exact)) continue;
    const auto [strength, r] = boundary_strength(s, ps, p);
    if (strength >= ps.notable) return {p, r};
  }
  return {0, 0};
}

// The cycle of ops [first, last]; `next_start` is the next cycle's first op (SIZE_MAX: none).
InferredCycle make_cycle(const Timeline& tl, const TimelineIndex& ix, const Sequence& s, size_t first, size_t last,
                         size_t next_start) {
  const auto& g = tl.gpu_ops;
  const auto& rc = tl.runtime_calls;
  // A cycle begins when its first op was launched, or ran when its launch is unknown.
  auto issued = [&](size_t j) { return s.issue[j] >= 0 ? s.issue[j] : g.start[s.rows[j]]; };
  InferredCycle cy;
  cy.cpu_start = issued(first);
  const int32_t lr_last = ix.launch_row[s.rows[last]];
  cy.cpu_end = next_start != SIZE_MAX ? issued(next_start) : (lr_last >= 0 ? rc.end[lr_last] : g.end[s.rows[last]]);
  cy.gpu_end = cy.cpu_start;
  for (size_t j = first; j <= last; ++j) cy.gpu_end = std::max(cy.gpu_end, g.end[s.rows[j]]);
  // The launching thread: of the first op, or of the first op of the cycle whose launch
  // was recorded (the API calls of the cycle's process fall in its window by pid).
  for (size_t j = first; j <= last; ++j) {
    const int32_t lr = ix.launch_row[s.rows[j]];
    if (lr < 0) continue;
    cy.pid = rc.pid[lr];
    cy.tid = rc.tid[lr];
    break;
  }
  cy.ops = static_cast<int64_t>(last - first + 1);
  return cy;
}

std::optional<InferredSteps> infer_sequence(const Timeline& tl, const TimelineIndex& ix, int32_t source,
                                            const Sequence& s) {
  if (s.rows.size() < static_cast<size_t>(kMinPeriod * kMinCycles)) return std::nullopt;
  const size_t distinct = s.tok.empty() ? 0 : *std::max_element(s.tok.begin(), s.tok.end()) + 1;
  double match = 0;
  const int64_t base = base_period(s, distinct, &match);
  if (base == 0) return std::nullopt;

  const Pauses ps = pause_profile(tl, s);
  auto [period, phase] = iteration_period(s, ps, base, distinct);
  if (period == 0 && base >= kMinPeriod && self_match(s.tok, base) >= kMinMatch) {
    period = base;  // no clear boundary at all: cycles of the base period from its start
  }
  if (period < kMinPeriod) return std::nullopt;
  if (period != base) match = self_match(s.tok, period);

  const std::vector<size_t> starts = cycle_starts(s, period, phase);
  InferredSteps out;
  out.source = source;
  out.period_ops = period;
  out.match = match;
  // Whole cycles only: from one start to the next, or the last start when exactly a period
  // of ops remains. What precedes the first start is the warm-up's partial cycle.
  for (size_t c = 0; c < starts.size(); ++c) {
    const size_t first = starts[c];
    const bool has_next = c + 1 < starts.size();
    const size_t last = has_next ? starts[c + 1] - 1 : first + static_cast<size_t>(period) - 1;
    if (last >= s.rows.size()) break;
    if (!has_next && last != s.rows.size() - 1) break;
    const InferredCycle cy = make_cycle(tl, ix, s, first, last, has_next ? starts[c + 1] : SIZE_MAX);
    // A cycle of another length is not an iteration of this loop: evaluation passes,
    // checkpointing, the partial iterations around them. Kept apart, and counted.
    if (std::abs(cy.ops - period) > std::max<int64_t>(2, period / 50)) {
      ++out.other_cycles;
      continue;
    }
    out.cycles.push_back(cy);
  }
  if (static_cast<int64_t>(out.cycles.size()) < kMinCycles) return std::nullopt;
  return out;
}

// Spread of the cycles' lengths (coefficient of variation): iterations of one loop take
// about the same time; a wrong period mixes one and a half iterations with one.
double spread(const InferredSteps& r) {
  if (r.cycles.size() < 2) return 1e9;
  double sum = 0, sq = 0;
  for (const auto& c : r.cycles) {
    const double d = static_cast<double>(c.cpu_end - c.cpu_start);
    sum += d;
    sq += d * d;
  }
  const double n = static_cast<double>(r.cycles.size());
  const double mean = sum / n;
  return mean > 0 ? std::sqrt(std::max(0.0, sq / n - mean * mean)) / mean : 1e9;
}

constexpr double kMinAnchorCover = 0.5;   // anchored cycles hold at least half the ops
constexpr double kOtherWorkFactor = 1.5;  // an anchored cycle of over 1.5x (under 1/1.5x) the median op count
constexpr int64_t kMaxOtherShare = 4;     // at most a quarter of the anchored cycles off the median
constexpr double kAnchorPause = 8.0;      // an anchor's pause: 8x the typical pause (a layer's ops: 1.5-3.6x)

// Steps of a loop whose op sequence changes from one iteration to the next (variable
// sequence lengths pick other GEMM kernels, another embedding-backward path, split-K
// reductions): no period repeats, but the iteration still begins with the same op after
// the same host work (reading the batch, the allocator's sync, the optimizer's host
// time). The anchor is a name issued after a pause of 8x the typical one in two thirds of
// its occurrences; among those, the one whose pauses add up to the most (that pause times
// its count): on empty_cache's transformer (typical pause 50 us), the step's first op waits
// 3.1 ms (42 times) and a layer's ops 0.09-0.12 ms (252-504 times); on resnet_workers'
// traced run (26 us) a layer's 40-90 us. Each cycle runs from one occurrence to the next.
std::optional<InferredSteps> infer_by_anchor(const Timeline& tl, const TimelineIndex& ix, int32_t source,
                                             const Sequence& s) {
  const size_t n = s.tok.size();
  if (n < static_cast<size_t>(kMinPeriod * kMinCycles)) return std::nullopt;
  const size_t distinct = *std::max_element(s.tok.begin(), s.tok.end()) + 1;
  const Pauses ps = pause_profile(tl, s);
  std::vector<std::vector<size_t>> at(distinct);
  for (size_t j = 0; j < n; ++j) at[s.tok[j]].push_back(j);
  const size_t max_count = n / static_cast<size_t>(kMinPeriod);
  uint32_t best = UINT32_MAX;
  double best_mass = 0;  // in double: a hostile trace's pauses times their count overflow int64
  std::vector<TimeNs> before;
  for (uint32_t t = 0; t < distinct; ++t) {
    const auto& pos = at[t];
    if (pos.size() < static_cast<size_t>(kMinCycles) + 1 || pos.size() > max_count) continue;
    if (static_cast<double>(pos.back() - pos.front()) < kMinAnchorCover * static_cast<double>(n)) continue;
    before.clear();
    for (size_t j : pos) before.push_back(ps.before[j]);
    const TimeNs pause = lower_tercile(before);
    if (static_cast<double>(pause) <
        std::max(static_cast<double>(ps.notable), kAnchorPause * static_cast<double>(ps.typical))) {
      continue;
    }
    const double mass = static_cast<double>(pause) * static_cast<double>(pos.size());
    if (best == UINT32_MAX || mass > best_mass) {
      best = t;
      best_mass = mass;
    }
  }
  if (best == UINT32_MAX) return std::nullopt;
  const auto& pos = at[best];
  std::vector<int64_t> ops;
  for (size_t c = 0; c + 1 < pos.size(); ++c) ops.push_back(static_cast<int64_t>(pos[c + 1] - pos[c]));
  std::vector<int64_t> sorted = ops;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const int64_t median_ops = sorted[sorted.size() / 2];
  InferredSteps out;
  out.source = source;
  out.period_ops = median_ops;
  out.anchored = true;
  // Whole cycles only: the ops after the last occurrence may be a partial iteration.
  for (size_t c = 0; c + 1 < pos.size(); ++c) {
    const double ratio = static_cast<double>(ops[c]) / static_cast<double>(median_ops);
    if (ratio > kOtherWorkFactor || ratio < 1.0 / kOtherWorkFactor) {
      ++out.other_cycles;  // evaluation, a checkpoint, or an iteration whose anchor was missed
      continue;
    }
    out.cycles.push_back(make_cycle(tl, ix, s, pos[c], pos[c + 1] - 1, pos[c + 1]));
  }
  // An op that begins each iteration splits the run into cycles of about one op count; one
  // that comes two or three times an iteration, or not in every one, leaves many cycles
  // far off the median (resnet_workers' traced run: 16 of 41): no anchor, no steps.
  if (static_cast<int64_t>(out.cycles.size()) < kMinCycles ||
      out.other_cycles * kMaxOtherShare > static_cast<int64_t>(ops.size())) {
    return std::nullopt;
  }
  return out;
}

// The busiest stream's sequence, unless the issue order over all streams gives clearly
// steadier cycles (cuDNN's multi-stream RNNs; measured on lstm_lm, docs/VALIDATION.md).
// Where neither repeats, the busiest stream's cycles between the anchor op of each
// iteration (infer_by_anchor).
std::optional<InferredSteps> infer_source(const Timeline& tl, const TimelineIndex& ix, int32_t source,
                                          const std::vector<uint32_t>& rows) {
  const Sequence stream = stream_sequence(tl, ix, rows);
  auto by_stream = infer_sequence(tl, ix, source, stream);
  auto by_issue = infer_sequence(tl, ix, source, issue_sequence(tl, ix, rows));
  if (!by_issue && !by_stream) return infer_by_anchor(tl, ix, source, stream);
  if (!by_issue) return by_stream;
  if (!by_stream) return by_issue;
  return spread(*by_issue) < 0.5 * spread(*by_stream) ? by_issue : by_stream;
}

}  // namespace

std::vector<InferredSteps> infer_steps(const Timeline& tl, const TimelineIndex& ix) {
  std::map<int32_t, std::vector<uint32_t>> by_source;
  const auto& g = tl.gpu_ops;
  for (size_t i = 0; i < g.size(); ++i) {
    const int16_t d = g.device[i];
    const int32_t src = d >= 0 && static_cast<size_t>(d) < tl.devices.size() ? tl.devices[d].source_index : 0;
    by_source[src].push_back(static_cast<uint32_t>(i));
  }
  std::vector<InferredSteps> out;
  for (const auto& [src, rows] : by_source) {
    if (auto r = infer_source(tl, ix, src, rows)) out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace chokepoint::analyses
