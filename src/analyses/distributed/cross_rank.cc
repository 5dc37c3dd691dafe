#include "analyses/distributed/cross_rank.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analyses/rank_sum.h"

namespace chokepoint::analyses::distributed {
namespace {

using whatif::Estimate;
using whatif::Remedy;

// The key a collective is matched by across ranks.
using MatchKey = std::tuple<int64_t, int32_t>;  // (step, index in step) or (-1, order)

MatchKey key_of(const Collective& c, int32_t order, bool by_step) {
  return by_step ? MatchKey{c.step, c.in_step} : MatchKey{-1, order};
}

// One matched collective: each rank's row of it (index into its collectives, -1 absent).
struct Matched {
  MatchKey key;
  std::vector<int32_t> row;
  TimeNs first = 0, last = 0;  // first and last arrival
};

// Collectives present on every rank, with the same kind, by key.
std::vector<Matched> match(const std::vector<RankSummary>& ranks) {
  std::vector<Matched> out;
  if (ranks.size() < 2) return out;
  bool by_step = true;
  for (const auto& r : ranks) by_step = by_step && !r.step_numbers.empty();
  std::map<MatchKey, Matched> m;
  for (size_t ri = 0; ri < ranks.size(); ++ri) {
    const auto& cs = ranks[ri].collectives;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (by_step && cs[i].step < 0) continue;
      Matched& x = m[key_of(cs[i], static_cast<int32_t>(i), by_step)];
      if (x.row.empty()) {
        x.row.assign(ranks.size(), -1);
        x.key = key_of(cs[i], static_cast<int32_t>(i), by_step);
      }
      x.row[ri] = static_cast<int32_t>(i);
    }
  }
  for (auto& [k, x] : m) {
    bool all = true;
    CollectiveKind kind = CollectiveKind::kOther;
    for (size_t ri = 0; ri < ranks.size() && all; ++ri) {
      if (x.row[ri] < 0) {
        all = false;
        break;
      }
      const Collective& c = ranks[ri].collectives[static_cast<size_t>(x.row[ri])];
      if (ri == 0) kind = c.kind;
      all = c.kind == kind;
      x.first = ri == 0 ? c.start : std::min(x.first, c.start);
      x.last = ri == 0 ? c.start : std::max(x.last, c.start);
    }
    if (all) out.push_back(std::move(x));
  }
  return out;
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

double ms(TimeNs ns) { return static_cast<double>(ns) / 1e6; }

// Steps of a rank (at least one: a trace without steps is one window).
double steps_of(const RankSummary& r) { return std::max<double>(1.0, static_cast<double>(r.step_numbers.size())); }

// Why the straggler is late: its largest excess over the other ranks' median in the parts
// of the step it owns (data loading, host work, compute), or its GPU's clocks.
void explain(const std::vector<RankSummary>& ranks, const std::vector<RankRow>& rows, Straggler& s) {
  std::vector<double> input, host, compute, clock;
  size_t si = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].rank == s.rank) {
      si = i;
      continue;
    }
    input.push_back(rows[i].input_ms);
    host.push_back(rows[i].host_ms);
    compute.push_back(ranks[i].compute_ms);
    if (rows[i].sm_clock_mhz) clock.push_back(*rows[i].sm_clock_mhz);
  }
  const double ex_input = rows[si].input_ms - median(input);
  const double ex_host = rows[si].host_ms - median(host);
  const double ex_compute = ranks[si].compute_ms - median(compute);
  s.detail = fmt::format(
      "its excess over the other ranks' median per step: data loading {:+.2f} ms, host work {:+.2f} ms, "
      "GPU compute {:+.2f} ms",
      ex_input, ex_host, ex_compute);
  // A GPU clocked 5% or more below the others' (power or thermal capping) makes its compute slower.
  const bool slow_clock = rows[si].sm_clock_mhz && !clock.empty() && *rows[si].sm_clock_mhz < 0.95 * median(clock);
  if (slow_clock)
    s.detail += fmt::format("; its SM clock {:.0f} MHz against {:.0f} MHz", *rows[si].sm_clock_mhz, median(clock));
  const std::vector<std::pair<const char*, double>> parts = {
      {"input", ex_input}, {"host", ex_host}, {"compute", ex_compute}};
  auto best = std::max_element(parts.begin(), parts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  // An excess under a tenth of the others' wait explains nothing.
  if (best->second < 0.1 * s.extra_ms) {
    s.cause = slow_clock ? "clocks" : "unknown";
    return;
  }
  s.cause = std::string(best->first) == "compute" && slow_clock ? "clocks" : best->first;
  s.cause_ms = best->second;
}

void add_estimates(DistributedAnalysis& d) {
  const double step = d.step_ms;
  if (step <= 0) return;
  auto est = [&](Remedy r, double saved, std::string change, std::vector<std::string> assumptions) {
    Estimate e;
    e.remedy = r;
    e.step_ms_before = step;
    e.step_ms_after = std::max(step - saved, 1e-3);
    e.speedup = step / e.step_ms_after;
    e.change = std::move(change);
    e.assumptions = std::move(assumptions);
    d.remedies.push_back(std::move(e));
  };
  if (d.straggler && d.straggler->extra_ms > 0) {
    const Straggler& s = *d.straggler;
    est(Remedy::kFixStraggler, s.extra_ms,
        fmt::format("rank {} arrives at its collectives {:.2f} ms per step later than the others' median; "
                    "without that the other ranks stop waiting for it",
                    s.rank, s.extra_ms),
        {"the straggler's extra time goes away, not onto another rank",
         "the collectives' own transfer time stays as measured"});
  }
  // Hiding the exposed collectives cannot make the step shorter than its compute, nor than
  // its communication.
  const double floor = std::max(d.compute_ms, d.comm_ms);
  const double straggler_ms = d.straggler ? d.straggler->extra_ms : 0;
  const double hide = std::min(d.exposed_comm_ms, std::max(0.0, step - straggler_ms - floor));
  if (hide > 0) {
    est(Remedy::kOverlapComm, hide,
        fmt::format("{:.2f} of the {:.2f} ms per step spent in collectives with no compute beside them overlap "
                    "the backward pass",
                    hide, d.exposed_comm_ms),
        {"the collectives can start as their gradients are ready (DDP buckets, FSDP prefetch)",
         "overlapped, they slow the compute kernels by nothing (they share SMs and memory bandwidth)"});
    // Gradient accumulation over 4 micro-steps: 3 in 4 all-reduces go.
    const double acc = std::min(hide, 0.75 * d.exposed_comm_ms);
    est(Remedy::kAccumulateNoSync, acc,
        fmt::format("gradients all-reduced every 4th step under no_sync(): {:.2f} ms of exposed collectives per "
                    "step become {:.2f}",
                    d.exposed_comm_ms, d.exposed_comm_ms - acc),
        {"4 micro-steps per optimizer step, the same samples per optimizer step"});
  }
  std::sort(d.remedies.begin(), d.remedies.end(),
            [](const Estimate& a, const Estimate& b) { return a.speedup > b.speedup; });
}

}  // namespace

std::optional<double> nvlink_gbps(int gen) {
  switch (gen) {
    case 2: return 150;
    case 3: return 300;
    case 4: return 450;
    case 5: return 900;
    default: return std::nullopt;
  }
}

std::vector<ClockAlignment> align_clocks(std::vector<RankSummary>& ranks) {
  std::vector<ClockAlignment> out;
  std::sort(ranks.begin(), ranks.end(), [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  if (ranks.empty()) return out;
  const int32_t ref = ranks.front().domain;
  std::map<int32_t, std::vector<double>> diffs;  // domain -> end(rank of domain) - mean end(reference ranks)
  for (const Matched& m : match(ranks)) {
    double ref_end = 0;
    int n = 0;
    for (size_t ri = 0; ri < ranks.size(); ++ri) {
      if (ranks[ri].domain != ref) continue;
      ref_end += static_cast<double>(ranks[ri].collectives[static_cast<size_t>(m.row[ri])].end);
      ++n;
    }
    if (n == 0) continue;
    ref_end /= n;
    for (size_t ri = 0; ri < ranks.size(); ++ri) {
      if (ranks[ri].domain == ref) continue;
      diffs[ranks[ri].domain].push_back(static_cast<double>(ranks[ri].collectives[static_cast<size_t>(m.row[ri])].end) -
                                        ref_end);
    }
  }
  std::vector<int32_t> domains;
  for (const auto& r : ranks) {
    if (r.domain != ref && std::find(domains.begin(), domains.end(), r.domain) == domains.end())
      domains.push_back(r.domain);
  }
  for (int32_t dom : domains) {
    ClockAlignment a;
    a.domain = dom;
    const auto& v = diffs[dom];
    a.matched = static_cast<int64_t>(v.size());
    if (!v.empty()) {
      const double off = median(v);
      a.offset_ms = off / 1e6;
      a.spread_ms = (quantile(v, 0.95) - quantile(v, 0.05)) / 1e6;
      for (auto& r : ranks) {
        if (r.domain == dom) shift_times(r, -static_cast<TimeNs>(std::llround(off)));
      }
    }
    out.push_back(a);
  }
  return out;
}

namespace {

// What the ranks waited at the matched collectives.
struct Waits {
  std::vector<TimeNs> lost;             // per rank: waiting that cost time, summed over steps
  std::vector<int64_t> last;            // per rank: collectives it arrived last at
  std::vector<std::vector<TimeNs>> of;  // per rank, per collective row: its wait
  std::vector<double> skews;            // per matched collective, ms
};

Waits waits_of(const std::vector<RankSummary>& ranks, const std::vector<Matched>& matched) {
  const size_t n = ranks.size();
  Waits w;
  w.lost.assign(n, 0);
  w.last.assign(n, 0);
  w.of.resize(n);
  for (size_t ri = 0; ri < n; ++ri) w.of[ri].assign(ranks[ri].collectives.size(), 0);
  std::vector<std::map<int64_t, TimeNs>> step_wait(n);  // per rank: per step, the most it lost waiting
  for (const Matched& m : matched) {
    w.skews.push_back(ms(m.last - m.first));
    size_t latest = 0;
    const int64_t step = std::get<0>(m.key) >= 0 ? std::get<0>(m.key) : -1 - std::get<1>(m.key);
    for (size_t ri = 0; ri < n; ++ri) {
      const Collective& c = ranks[ri].collectives[static_cast<size_t>(m.row[ri])];
      const TimeNs wait = m.last - c.start;
      // Waiting costs the step only where no compute runs beside it (a bucket's wait on a
      // side stream under the backward pass costs nothing), and once per step: the ranks
      // that waited at one collective of a step are in step with the late one at the next.
      TimeNs& lost = step_wait[ri][step];
      lost = std::max(lost, std::min(c.exposed, wait));
      w.of[ri][static_cast<size_t>(m.row[ri])] = wait;
      if (c.start > ranks[latest].collectives[static_cast<size_t>(m.row[latest])].start) latest = ri;
    }
    ++w.last[latest];
  }
  for (size_t ri = 0; ri < n; ++ri) {
    for (const auto& [step, t] : step_wait[ri]) w.lost[ri] += t;
  }
  return w;
}

// One rank's row of the table.
RankRow row_of(const RankSummary& r, const Waits& w, size_t ri, size_t matched) {
  RankRow row;
  row.rank = r.rank;
  row.step_ms = r.step_ms;
  row.compute_ms = r.compute_ms;
  row.comm_ms = r.comm_ms;
  row.wait_ms = ms(w.lost[ri]) / steps_of(r);
  row.last_share = matched == 0 ? 0 : static_cast<double>(w.last[ri]) / static_cast<double>(matched);
  row.input_ms = r.idle_ms[static_cast<size_t>(IdleCause::kInput)];
  row.host_ms = r.idle_ms[static_cast<size_t>(IdleCause::kHostWork)] +
                r.idle_ms[static_cast<size_t>(IdleCause::kLaunchOverhead)] +
                r.idle_ms[static_cast<size_t>(IdleCause::kSync)] +
                r.idle_ms[static_cast<size_t>(IdleCause::kAllocator)];
  // Collectives on the host (gloo) block the launching thread: the GPU idles while a
  // rank waits for the others, which is no host work of its own.
  if (!r.collectives.empty() && !r.collectives.front().on_gpu) row.host_ms = std::max(0.0, row.host_ms - row.wait_ms);
  row.bound = r.bound;
  row.sm_clock_mhz = r.sm_clock_mhz;
  TimeNs exp = 0;
  for (size_t i = 0; i < r.collectives.size(); ++i) {
    const Collective& c = r.collectives[i];
    if (c.step < 0 && !r.step_numbers.empty()) continue;
    exp += std::max<TimeNs>(0, c.exposed - std::min(c.exposed, w.of[ri][i]));
  }
  row.exposed_comm_ms = ms(exp) / steps_of(r);
  return row;
}

void add_groups(const std::vector<RankSummary>& ranks, const Waits& w, DistributedAnalysis& d) {
  const size_t n = ranks.size();
  const auto& wait_of = w.of;
  // Collective groups by (kind, bytes), over every rank's collectives in steps.
  std::map<std::pair<int, int64_t>, std::vector<std::tuple<size_t, double, double, double>>>
      g;  // rank, dur, exposed, transfer
  for (size_t ri = 0; ri < n; ++ri) {
    const RankSummary& r = ranks[ri];
    for (size_t i = 0; i < r.collectives.size(); ++i) {
      const Collective& c = r.collectives[i];
      if (c.step < 0 && !r.step_numbers.empty()) continue;
      const TimeNs w = wait_of[ri][i];
      g[{static_cast<int>(c.kind), c.bytes}].emplace_back(ri, ms(c.end - c.start),
                                                          ms(std::max<TimeNs>(0, c.exposed - std::min(c.exposed, w))),
                                                          ms(std::max<TimeNs>(0, c.end - c.start - w)));
    }
  }
  for (const auto& [k, v] : g) {
    CollectiveGroup cg;
    cg.kind = static_cast<CollectiveKind>(k.first);
    cg.bytes = k.second;
    std::vector<double> per_rank_ms(n, 0), per_rank_exp(n, 0), per_rank_calls(n, 0), transfer;
    for (const auto& [ri, dur, exp, xfer] : v) {
      per_rank_ms[ri] += dur / steps_of(ranks[ri]);
      per_rank_exp[ri] += exp / steps_of(ranks[ri]);
      per_rank_calls[ri] += 1 / steps_of(ranks[ri]);
      transfer.push_back(xfer);
    }
    cg.ms_per_step = median(per_rank_ms);
    cg.exposed_ms_per_step = median(per_rank_exp);
    cg.per_step = median(per_rank_calls);
    cg.transfer_ms = median(transfer);
    if (cg.bytes > 0 && cg.transfer_ms > 0) {
      cg.bus_gbps = static_cast<double>(cg.bytes) * bus_factor(cg.kind, d.world_size) / (cg.transfer_ms * 1e6);
    }
    d.groups.push_back(cg);
  }
  std::sort(d.groups.begin(), d.groups.end(), [](const CollectiveGroup& a, const CollectiveGroup& b) {
    return a.exposed_ms_per_step > b.exposed_ms_per_step;
  });
}

void add_link(const std::vector<RankSummary>& ranks, DistributedAnalysis& d) {
  // The link: NVLink where every rank's GPU has it and the collectives run on the GPUs.
  const bool gpu_side = !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [](const RankSummary& r) {
    return !r.collectives.empty() && r.collectives.front().on_gpu;
  });
  // Ranks of several nodes talk over the network too, whose figure no trace holds.
  const bool one_node = std::all_of(ranks.begin(), ranks.end(),
                                    [&](const RankSummary& r) { return r.domain == ranks.front().domain; });
  if (gpu_side && one_node && !ranks.empty()) {
    int gen = ranks.front().nvlink_gen;
    for (const auto& r : ranks) gen = std::min(gen, r.nvlink_gen);
    d.link_gbps = nvlink_gbps(gen);
    if (d.link_gbps) d.link = fmt::format("NVLink {}", gen);
  }
}

void add_straggler(const std::vector<RankSummary>& ranks, const Waits& w, size_t matched, DistributedAnalysis& d) {
  const size_t n = ranks.size();
  const auto& last = w.last;
  // The straggler: last at most collectives, and the others wait for it.
  if (n >= 2 && matched > 0) {
    const size_t s = static_cast<size_t>(std::max_element(last.begin(), last.end()) - last.begin());
    std::vector<double> others_wait;
    for (size_t ri = 0; ri < n; ++ri) {
      if (ri != s) others_wait.push_back(d.ranks[ri].wait_ms);
    }
    const double extra = median(others_wait);
    if (d.ranks[s].last_share >= kStragglerLastShare && extra >= kStragglerMinWaitShare * d.step_ms) {
      Straggler st;
      st.rank = d.ranks[s].rank;
      st.last_share = d.ranks[s].last_share;
      st.extra_ms = extra;
      explain(ranks, d.ranks, st);
      d.straggler = st;
    }
  }
}

}  // namespace

DistributedAnalysis analyze_ranks(std::vector<RankSummary> ranks) {
  DistributedAnalysis d;
  std::sort(ranks.begin(), ranks.end(), [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  d.world_size = static_cast<int32_t>(ranks.size());
  for (const auto& r : ranks) {
    d.world_size = std::max(d.world_size, r.world_size);
    if (d.backend.empty()) d.backend = r.backend;
  }
  const std::vector<Matched> matched = match(ranks);
  d.matched_collectives = static_cast<int64_t>(matched.size());
  const Waits w = waits_of(ranks, matched);
  d.skew_p50_ms = quantile(w.skews, 0.5);
  d.skew_p95_ms = quantile(w.skews, 0.95);
  d.skew_max_ms = w.skews.empty() ? 0 : *std::max_element(w.skews.begin(), w.skews.end());
  std::vector<double> exposed, comm, compute;
  for (size_t ri = 0; ri < ranks.size(); ++ri) {
    RankRow row = row_of(ranks[ri], w, ri, matched.size());
    exposed.push_back(row.exposed_comm_ms);
    comm.push_back(std::max(0.0, row.comm_ms - row.wait_ms));  // the transfers, without the waiting
    compute.push_back(row.compute_ms);
    d.step_ms += row.step_ms / static_cast<double>(ranks.size());
    d.ranks.push_back(std::move(row));
  }
  d.exposed_comm_ms = median(exposed);
  d.comm_ms = median(comm);
  d.compute_ms = median(compute);
  add_groups(ranks, w, d);
  add_link(ranks, d);
  add_straggler(ranks, w, matched.size(), d);
  add_estimates(d);
  return d;
}

}  // namespace chokepoint::analyses::distributed
