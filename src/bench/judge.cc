#include "bench/judge.h"

#include <fmt/format.h>

#include "bench/expectations.h"
#include "machine/bench_keys.h"
#include "machine/ceilings.h"

namespace chokepoint::bench {

namespace bench_keys = machine::bench_keys;
namespace {

using machine::Measurement;
using machine::ResultStatus;

// What usually holds a test of `group` back when no rule names a cause.
std::string generic_cause(machine::BenchGroup group, const Measurement& m) {
  switch (group) {
    case machine::BenchGroup::kPcie:
      return "slower than the link allows: a PCIe switch shared with other devices, or host memory bandwidth";
    case machine::BenchGroup::kDram:
    case machine::BenchGroup::kL2:
      return "memory clock below its maximum (nvidia-smi -q -d CLOCK), or another process using the GPU";
    case machine::BenchGroup::kLaunch: return "slow host CPU (single-thread speed sets the launch cost)";
    case machine::BenchGroup::kCompute:
      return m.key == bench_keys::kFfmaFp32 ? "the SMs did not run at full clock or were shared with other work"
                                            : "power capping under tensor load, or cuBLASLt chose a slow kernel for "
                                              "this shape (see the note for the algorithm)";
    case machine::BenchGroup::kPageable:
    case machine::BenchGroup::kSelftest: return "";
  }
  return "";
}

// The causes of `m` below par: the engine's rules that apply, else the generic one.
void set_causes(Measurement& m, machine::BenchGroup group, const machine::GpuProfile& g, const machine::HostInfo& host,
                CauseFinder causes) {
  m.cause.clear();
  m.cause_rules.clear();
  for (auto& c : causes != nullptr ? causes(group, m, g, host) : std::vector<machine::BenchCause>{}) {
    m.cause += (m.cause.empty() ? "" : "; ") + c.text;
    m.cause_rules.push_back(std::move(c.rule));
  }
  if (m.cause.empty()) m.cause = generic_cause(group, m);
}

machine::Ceilings published_for(const machine::GpuProfile& g) {
  machine::DeviceSpec d;
  d.name = g.name;
  d.cc_major = g.cc_major;
  d.cc_minor = g.cc_minor;
  d.num_sms = g.num_sms;
  d.memory_bytes = g.memory_bytes;  // tells form factors apart (H100 SXM 80 GB vs NVL 94 GB)
  return machine::published_ceilings_for(d);
}

void judge_one(Measurement& m, const machine::GpuProfile& g, const machine::Ceilings& pub,
               const machine::HostInfo& host, CauseFinder causes) {
  m.reference.reset();
  m.pct_of_reference.reset();
  m.par_pct.reset();
  m.reference_source.clear();
  m.cause.clear();
  m.cause_rules.clear();
  if (m.status == ResultStatus::kWaived) {
    m.verdict = machine::kVerdictWaived;
    m.cause = m.note;
    return;
  }
  if (m.status == ResultStatus::kFailed || !m.value) {
    m.verdict = machine::kVerdictFailed;
    m.cause = m.note;
    return;
  }
  const Expectation* e = expectation_for(m.key);
  if (e == nullptr) {  // a testcase newer than this judge: show it, judge nothing
    m.verdict = machine::kVerdictInfo;
    return;
  }
  const double v = *m.value;
  switch (e->basis) {
    case Basis::kSelftest: m.verdict = machine::kVerdictOk; return;
    case Basis::kNone:
      m.verdict = machine::kVerdictInfo;
      if (m.key == bench_keys::kL2Read) {
        if (auto dram = g.ok_value(bench_keys::kDramRead); dram && *dram > 0) {
          m.cause = fmt::format("no published L2 figure; {:.1f}x the DRAM read bandwidth", v / *dram);
        } else {
          m.cause = "no published L2 figure";
        }
      }
      return;
    case Basis::kPinned: {
      const std::string pinned = m.key == bench_keys::kH2dPageable ? bench_keys::kH2dPinned : bench_keys::kD2hPinned;
      m.verdict = machine::kVerdictInfo;
      if (auto p = g.ok_value(pinned); p && *p > 0) {
        m.reference = *p;
        m.reference_source = "measured:" + pinned;
        m.pct_of_reference = 100.0 * v / *p;
      }
      set_causes(m, e->group, g, host, causes);
      return;
    }
    case Basis::kExpected:
      m.reference = e->expected;
      m.reference_source = std::string("expected:") + std::string(e->reference_note);
      m.pct_of_reference = v > 0 ? 100.0 * e->expected / v : 0.0;
      m.par_pct = e->par_pct;
      break;
    case Basis::kPublished: {
      const auto ref = e->published != nullptr ? e->published(pub) : std::nullopt;
      if (!ref || *ref <= 0) {
        m.verdict = machine::kVerdictInfo;
        m.cause = pub.gpu.empty() ? "no published figure for this GPU" : "no published figure for " + pub.gpu;
        return;
      }
      m.reference = *ref;
      m.reference_source = "published:" + pub.gpu + " " + std::string(e->reference_note);
      m.pct_of_reference = 100.0 * v / *ref;
      m.par_pct = e->par_pct;
      if (*m.pct_of_reference > kAbovePublishedPct) {
        m.verdict = machine::kVerdictAbovePublished;
        m.cause = "faster than the datasheet: this GPU may be a different variant than the table's " + pub.gpu +
                  ", or the measurement is wrong";
        return;
      }
      break;
    }
  }
  if (*m.pct_of_reference >= *m.par_pct) {
    m.verdict = machine::kVerdictOk;
    return;
  }
  m.verdict = machine::kVerdictBelowPar;
  set_causes(m, e->group, g, host, causes);
}

struct RidgeSource {
  const char* precision;
  const char* key;
  std::optional<double> (*published)(const machine::Ceilings&);
};

const RidgeSource kRidges[] = {
    {"fp32", bench_keys::kFfmaFp32, [](const machine::Ceilings& c) { return c.fp32_tflops; }},
    {"tf32", bench_keys::kGemmTf32, [](const machine::Ceilings& c) { return c.tf32_tflops; }},
    {"fp16", bench_keys::kGemmFp16, [](const machine::Ceilings& c) { return c.bf16_tflops; }},
    {"bf16", bench_keys::kGemmBf16, [](const machine::Ceilings& c) { return c.bf16_tflops; }},
    {"fp8", bench_keys::kGemmFp8, [](const machine::Ceilings& c) { return c.fp8_tflops; }},
    {"int8", bench_keys::kGemmInt8, [](const machine::Ceilings& c) { return c.int8_tops; }},
};

void ridge_points(machine::GpuProfile& g, const machine::Ceilings& pub) {
  g.ridge_points.clear();
  const auto hbm = measured_hbm_gbps(g);
  if (!hbm || *hbm <= 0) return;
  for (const auto& r : kRidges) {
    const auto tflops = g.ok_value(r.key);
    if (!tflops || *tflops <= 0) continue;
    machine::RidgePoint rp;
    rp.precision = r.precision;
    rp.tflops = *tflops;
    rp.hbm_gbps = *hbm;
    rp.flop_per_byte = *tflops * 1e3 / *hbm;  // TFLOP/s / GB/s = 1e3 FLOP/B
    const auto pt = r.published(pub);
    if (pt && pub.hbm_gbps && *pub.hbm_gbps > 0) rp.published_flop_per_byte = *pt * 1e3 / *pub.hbm_gbps;
    g.ridge_points.push_back(rp);
  }
}

}  // namespace

std::optional<double> measured_hbm_gbps(const machine::GpuProfile& g) {
  if (auto v = g.ok_value(bench_keys::kD2dMemcpy)) return 2 * *v;
  if (auto v = g.ok_value(bench_keys::kDramCopy)) return 2 * *v;
  return g.ok_value(bench_keys::kDramRead);
}

void judge(machine::Profile& p, CauseFinder causes) {
  for (auto& g : p.gpus) {
    const machine::Ceilings pub = published_for(g);
    g.published_gpu = pub.gpu;
    for (auto& m : g.results) judge_one(m, g, pub, p.host, causes);
    ridge_points(g, pub);
  }
}

}  // namespace chokepoint::bench
