// clock-throttled: the SM clock is held down while the GPU works. Thermal and hardware
// slowdowns (too hot, power brake, failing power supply) are faults; the software power
// cap is how a saturated GPU normally runs, and a problem only when the GPU is not busy.
#include <algorithm>

#include <fmt/format.h>

#include "rules/checks/checks.h"
#include "rules/rule.h"
#include "rules/sampled/live_util.h"
#include "samples/clock_reasons.h"

namespace chokepoint::rules {
namespace {
using namespace sampled;
// NVML clock event reason bits (samples/clock_reasons.h).
constexpr uint64_t kPowerCap = 0x4;
constexpr uint64_t kSlowdowns = 0x8 | 0x20 | 0x40 | 0x80;  // hw, sw thermal, hw thermal, power brake
// Hardware slowdown halves the clock or worse: a twentieth of the active window is already
// a measurable loss. The power cap is routine; it matters when it holds a fifth of the time.
constexpr double kMinSlowdownShare = 0.05;
constexpr double kMinPowerCapShare = 0.20;
// A GPU this busy reaching its power limit is doing what it should: large BF16 GEMMs on
// H100/H200 draw the full 700 W with tensor pipes a third of the time or more; SM activity
// of 80% is DCGM's "effective use" line; 80% nvidia-smi utilization without GPM.
constexpr double kTensorHeavyPct = 30.0, kSmHeavyPct = 80.0, kUtilHeavyPct = 80.0;
// The clock-ratio what-if needs this many ticks on each side.
constexpr int64_t kMinTicks = 3;

struct ClockSplit {
  int64_t n = 0, hit = 0, n_ok = 0, n_hit = 0;
  double clock_ok = 0, clock_hit = 0;
};

ClockSplit split(const SampleEvidence& c, const GpuLive& g, uint64_t mask) {
  const samples::Series* r = gpu_series(c, g, MetricId::kGpuClockEventReasons);
  const samples::Series* clk = gpu_series(c, g, MetricId::kGpuSmClockMhz);
  const int64_t age = max_age_ns(c.la);
  ClockSplit s;
  for (const int64_t t : analyses::sampled::active_ticks(c.la, g)) {
    const auto bits = analyses::sampled::held(r, t, age);
    if (!bits) continue;
    const bool hit = (static_cast<uint64_t>(*bits) & mask) != 0;
    ++s.n;
    s.hit += hit;
    if (const auto f = analyses::sampled::held(clk, t, age)) {
      (hit ? s.clock_hit : s.clock_ok) += *f;
      ++(hit ? s.n_hit : s.n_ok);
    }
  }
  return s;
}

// Heavily loaded by the lines above (kTensorHeavyPct, kSmHeavyPct, kUtilHeavyPct).
bool heavily_loaded(const GpuLive& g) {
  return (g.tensor_active && g.tensor_active->mean >= kTensorHeavyPct) ||
         (g.sm_active && g.sm_active->mean >= kSmHeavyPct) || (!g.sm_active && g.util && g.util->mean >= kUtilHeavyPct);
}

// What the finding says about one GPU, from its clock split.
struct Throttle {
  const ClockSplit& s;
  bool fault, heavy;
  double share, f_ok, f_hit;  // share of active ticks held down; mean SM clock otherwise and when held
};

std::string throttle_detail(const GpuLive& g, const Throttle& t) {
  std::string bits;
  for (const auto& r : g.clock_reasons)
    bits += fmt::format("{}{} {:.0f}%", bits.empty() ? "" : ", ", r.name, 100 * r.share);
  std::string detail = fmt::format(
      "Clock event reasons while active: {}. SM clock {:.0f} MHz on average{}{}{}.", bits,
      g.sm_clock_mhz ? g.sm_clock_mhz->mean : 0.0,
      t.s.n_hit && t.s.n_ok ? fmt::format(" ({:.0f} MHz when limited, {:.0f} MHz otherwise)", t.f_hit, t.f_ok) : "",
      g.power_w ? fmt::format("; power {:.0f} W", g.power_w->mean) : "",
      g.power_limit_w ? fmt::format(" of a {:.0f} W limit", *g.power_limit_w) : "");
  if (g.temperature_c) detail += fmt::format(" Temperature peaked at {:.0f} C.", g.temperature_c->max);
  if (!t.fault)
    detail += t.heavy ? " The GPU is heavily loaded: drawing its full power budget is expected, not a fault."
                      : " The GPU is not heavily loaded, so the power limit may have been lowered.";
  return detail;
}

std::vector<Evidence> throttle_evidence(const GpuLive& g, const Throttle& t) {
  std::vector<Evidence> ev = {evidence(t.fault ? "slowdown_ticks_pct" : "power_cap_ticks_pct", 100 * t.share, "%",
                                       100 * (t.fault ? kMinSlowdownShare : kMinPowerCapShare))};
  if (g.sm_clock_mhz) ev.push_back(evidence("sm_clock_mean_mhz", g.sm_clock_mhz->mean, "MHz"));
  if (g.power_w) ev.push_back(evidence_vs_ceiling("power_mean_w", g.power_w->mean, "W", g.power_limit_w));
  if (g.tensor_active) ev.push_back(evidence("tensor_active_mean_pct", g.tensor_active->mean, "%"));
  if (g.temperature_c) ev.push_back(evidence("temperature_max_c", g.temperature_c->max, "C"));
  return ev;
}

const char* throttle_recommendation(const Throttle& t) {
  return t.fault   ? "Fix the cooling or power delivery: check fans and airflow, inlet temperature and dust, "
                     "`nvidia-smi -q -d PERFORMANCE,TEMPERATURE` for the active reasons, and power supply / brake "
                     "signals with the provider; a GPU slowing itself down cannot be tuned around in software."
         : t.heavy ? "Nothing to fix on the GPU: it runs at its power budget. To do more per joule, cut work "
                     "(lower precision: BF16/FP8, fused kernels); a higher limit (`nvidia-smi -pl`) only if "
                     "the board allows it."
                   : "Compare `nvidia-smi -q -d POWER` Current and Default Power Limit; restore the default "
                     "with `sudo nvidia-smi -pl <default>` if it was lowered, or ask the provider.";
}

// The finding of one GPU, or none when its clocks are not held down often enough.
std::optional<Finding> gpu_throttle(const SampleEvidence& c, const GpuLive& g) {
  const ClockSplit slow = split(c, g, kSlowdowns), cap = split(c, g, kPowerCap);
  if (slow.n == 0) return std::nullopt;
  const double slow_share = static_cast<double>(slow.hit) / slow.n, cap_share = static_cast<double>(cap.hit) / cap.n;
  const bool fault = slow_share >= kMinSlowdownShare;
  if (!fault && cap_share < kMinPowerCapShare) return std::nullopt;
  const ClockSplit& s = fault ? slow : cap;
  const double share = fault ? slow_share : cap_share;
  // What-if for clock-bound work: throttled ticks run at the unthrottled clock.
  std::optional<double> speedup;
  const double f_ok = s.n_ok ? s.clock_ok / s.n_ok : 0, f_hit = s.n_hit ? s.clock_hit / s.n_hit : 0;
  if (fault && s.n_ok >= kMinTicks && s.n_hit >= kMinTicks && f_hit > 0 && f_hit < f_ok) {
    speedup = 1.0 / (1.0 - share + share * f_hit / f_ok);
  }
  const Throttle t{s, fault, heavily_loaded(g), share, f_ok, f_hit};
  Finding f = new_finding(100 * share, speedup);
  if (fault) f.severity = std::max(f.severity, Severity::kWarning);  // a fault: at least a warning
  else f.severity = t.heavy ? Severity::kInfo : Severity::kWarning;
  f.title = fault ? fmt::format("{}: clocks cut by thermal/hardware slowdown in {:.0f}% of the active time",
                                gpu_label(g), 100 * share)
                  : fmt::format("{}: clocks held at the power limit in {:.0f}% of the active time", gpu_label(g),
                                100 * share);
  f.detail = throttle_detail(g, t);
  f.evidence = throttle_evidence(g, t);
  f.recommendation = throttle_recommendation(t);
  return f;
}
}  // namespace

std::optional<Finding> clock_throttled(const SampleEvidence& c) {
  std::optional<Finding> worst;
  for (const GpuLive* g : c.la.judged_gpus()) {
    std::optional<Finding> f = gpu_throttle(c, *g);
    if (f && (!worst || f->time_share_pct > worst->time_share_pct)) worst = std::move(f);
  }
  return worst;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain clock-throttled` prints.
extern const Rule clock_throttled_rule = {
    .id = "clock-throttled",
    .category = Category::kCompute,
    .samples = clock_throttled,
    .machine = checks::clock_throttled,
    .bench = checks::bench_clock,
    .meaning =
        "The SM clock is held down while the GPU works: thermal or hardware slowdown (too hot, "
        "power brake) is a fault; the software power cap is normal under full load.",
    .detection =
        "From live samples and doctor: NVML clock event reasons while the GPU is active "
        "(slowdowns from a twentieth of the time, the power cap from a fifth when the GPU is not "
        "busy).",
    .action =
        "Check cooling, airflow and power supply (nvidia-smi -q -d PERFORMANCE); raise a lowered "
        "power limit.",
};

}  // namespace chokepoint::rules
