#include "machine/ceilings.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "machine/bench_keys.h"
#include "machine/gpu_match.h"
#include "machine/profile_store.h"

namespace chokepoint::machine {
namespace {

// The figures themselves are in machine/gpu_table.cc (docs/FORMATS.md "Published
// ceilings": dense, no sparsity, the datasheet of each row).
std::optional<double> positive(double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; }

// Share of the dense peak a large cuBLAS GEMM sustains: bench on the H200 (2026-11-29,
// docs/VALIDATION.md): FP32 47 of 67, TF32 340 of 495, BF16 674 of 989, FP8 1328 of 1979
// TFLOP/s, all ~0.69 (the power cap holds the SM clock near 1.45 GHz under GEMMs).
constexpr double kGemmEfficiency = 0.69;

// Theoretical per-direction PCIe x16 bandwidth by generation, GB/s (docs/FORMATS.md "Published ceilings").
double pcie_x16_gbps(int gen) {
  switch (gen) {
    case 3: return 15.8;
    case 4: return 31.5;
    case 5: return 63.0;
    default: return 0;
  }
}

// Achievable fraction of the theoretical link for pinned copies: 53.1/63 and 55.3/63
// measured on the H200 machine (docs/FORMATS.md "H200 figures") -> ~0.85.
constexpr double kPinnedEfficiency = 0.85;
// Pageable copies reached 6.5 (H2D) and 10.9 (D2H) GB/s on that machine against 53-55
// pinned: about 0.15 of the pinned rate for H2D.
constexpr double kPageableFraction = 0.15;

// Median of the ok values of `key` over the GPUs; nullopt when none has one.
std::optional<double> median_of(const std::vector<const GpuProfile*>& gpus, const char* key) {
  std::vector<double> v;
  for (const GpuProfile* g : gpus) {
    if (auto x = g->ok_value(key); x && *x > 0) v.push_back(*x);
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<double> first_of(std::optional<double> a, std::optional<double> b) { return a ? a : b; }

// Median SM clock of the ok results of `key` over the GPUs; nullopt when none recorded one.
std::optional<double> clock_of(const std::vector<const GpuProfile*>& gpus, const char* key) {
  std::vector<double> v;
  for (const GpuProfile* g : gpus) {
    for (const Measurement& m : g->results) {
      if (m.key == key && m.status == ResultStatus::kOk && m.clock_mhz && *m.clock_mhz > 0) v.push_back(*m.clock_mhz);
    }
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<double> max_of(std::optional<double> a, std::optional<double> b) {
  if (a && b) return std::max(*a, *b);
  return a ? a : b;
}

}  // namespace

Ceilings apply_profile(Ceilings c, const Profile& profile, const std::string& gpu_name, const std::string& path) {
  std::vector<const GpuProfile*> gpus;
  for (const auto& g : profile.gpus) {
    if (same_gpu_name(g.name, gpu_name)) gpus.push_back(&g);
  }
  if (gpus.empty()) return c;
  bool used = false;
  auto take = [&used](std::optional<double>& field, std::optional<double> v, double scale = 1.0) {
    if (!v) return;
    field = *v * scale;
    used = true;
  };
  take(c.pcie_gbps, max_of(median_of(gpus, bench_keys::kH2dPinned), median_of(gpus, bench_keys::kD2hPinned)));
  take(c.pageable_gbps, max_of(median_of(gpus, bench_keys::kH2dPageable), median_of(gpus, bench_keys::kD2hPageable)));
  // The copy engines' device-to-device memcpy is the HBM figure; the copy kernel
  // stands in when the memcpy testcase did not run. Both count bytes once.
  const auto d2d = first_of(median_of(gpus, bench_keys::kD2dMemcpy), median_of(gpus, bench_keys::kDramCopy));
  take(c.d2d_copy_gbps, d2d);
  take(c.hbm_gbps, d2d, 2.0);
  take(c.fp32_tflops, first_of(median_of(gpus, bench_keys::kFfmaFp32), median_of(gpus, bench_keys::kGemmFp32)));
  take(c.tf32_tflops, median_of(gpus, bench_keys::kGemmTf32));
  take(c.bf16_tflops, first_of(median_of(gpus, bench_keys::kGemmBf16), median_of(gpus, bench_keys::kGemmFp16)));
  take(c.fp8_tflops, median_of(gpus, bench_keys::kGemmFp8));
  take(c.int8_tops, median_of(gpus, bench_keys::kGemmInt8));
  take(c.fp32_gemm_tflops, median_of(gpus, bench_keys::kGemmFp32));
  take(c.tf32_gemm_tflops, median_of(gpus, bench_keys::kGemmTf32));
  take(c.bf16_gemm_tflops, first_of(median_of(gpus, bench_keys::kGemmBf16), median_of(gpus, bench_keys::kGemmFp16)));
  take(c.fp8_gemm_tflops, median_of(gpus, bench_keys::kGemmFp8));
  if (!used) return c;
  c.tf32_gemm_mhz = clock_of(gpus, bench_keys::kGemmTf32);
  c.bf16_gemm_mhz = median_of(gpus, bench_keys::kGemmBf16) ? clock_of(gpus, bench_keys::kGemmBf16)
                                                           : clock_of(gpus, bench_keys::kGemmFp16);
  c.fp8_gemm_mhz = clock_of(gpus, bench_keys::kGemmFp8);
  if (c.gpu.empty()) c.gpu = gpus.front()->name;
  if (c.num_sms < 0) c.num_sms = gpus.front()->num_sms;
  c.source = "profile:" + path;
  return c;
}

Ceilings ceilings_for(const DeviceSpec& d) {
  Ceilings c = published_ceilings_for(d);
  if (d.name.empty()) return c;
  auto path = profile_path_for(d.name);
  if (!path) return c;
  // An unreadable profile falls back to the published figures: analyses must not fail
  // because of a stale file; `chokepoint bench --save` rewrites it.
  auto profile = load_profile(*path);
  if (!profile.ok()) return c;
  return apply_profile(std::move(c), profile.value(), d.name, *path);
}

namespace {

// The published row's figures into c, compute scaled by the device's share of the SMs and
// memory bandwidth, L2 and memory by its share of the memory (both 1 for a whole GPU).
void fill_published(Ceilings& c, const GpuMatch& g) {
  const GpuModel& p = *g.model;
  const double sm = g.sm_share, mem = g.memory_share;
  auto compute = [sm](double v) { return positive(v * sm); };
  c.hbm_gbps = p.mem_tbs * 1000.0 * mem;
  c.d2d_copy_gbps = *c.hbm_gbps / 2;
  c.l2_mb = positive(p.l2_mb * mem);
  c.memory_gb = positive(p.memory_gb * mem);
  c.fp64_tflops = compute(p.fp64);
  c.fp32_tflops = compute(p.fp32);
  c.tf32_tflops = compute(p.tf32);
  c.bf16_tflops = compute(p.bf16);
  c.fp8_tflops = compute(p.fp8);
  c.fp4_tflops = compute(p.fp4);
  c.int8_tops = compute(p.int8);
  c.fp32_gemm_tflops = compute(p.fp32 * kGemmEfficiency);
  c.tf32_gemm_tflops = compute(p.tf32 * kGemmEfficiency);
  c.bf16_gemm_tflops = compute(p.bf16 * kGemmEfficiency);
  c.fp8_gemm_tflops = compute(p.fp8 * kGemmEfficiency);
  c.boost_mhz = p.boost_mhz > 0 ? p.boost_mhz : -1;
  c.pcie_gen = p.pcie_gen;
  c.nvlink_gen = p.nvlink_gen;
  if (p.pcie_gen > 0) {  // a MIG slice shares the whole link
    c.pcie_theoretical_gbps = pcie_x16_gbps(p.pcie_gen);
    c.pcie_gbps = *c.pcie_theoretical_gbps * kPinnedEfficiency;
    c.pageable_gbps = *c.pcie_gbps * kPageableFraction;
  }
  if (c.num_sms < 0) c.num_sms = static_cast<int>(std::lround(p.sms * sm));
}

}  // namespace

Ceilings published_ceilings_for(const DeviceSpec& d) {
  Ceilings c;
  c.device = d.name;
  c.num_sms = d.num_sms;
  c.has_tensor_cores = d.cc_major >= 7;
  c.has_tf32 = d.cc_major >= 8;
  const GpuMatch g = match_gpu(d.name, d.num_sms, d.memory_bytes);
  if (g.model == nullptr) {
    c.source = "unknown";
    return c;
  }
  c.gpu = g.model->label;
  if (g.mig) c.gpu += g.mig_profile.empty() ? " MIG slice" : " MIG " + g.mig_profile;
  c.source = "published:" + c.gpu;
  c.note = g.note;
  fill_published(c, g);
  if (d.cc_major < 0) {  // no compute capability recorded: trust the table
    c.has_tensor_cores = g.model->bf16 > 0;
    c.has_tf32 = g.model->tf32 > 0;
  }
  return c;
}

std::string missing_ceiling(const Ceilings& c, std::string_view figure) {
  std::string s = "no ";
  s += figure;
  // A list of figures ("FP32 TFLOP/s and TF32 TFLOP/s") takes the plural.
  s += figure.find(" and ") == std::string_view::npos ? " ceiling for " : " ceilings for ";
  s += c.device.empty() ? std::string("this GPU") : "\"" + c.device + "\"";
  s += c.source == "unknown" || c.gpu.empty() ? std::string(" (not in the published table)")
                                              : " (the " + c.gpu + " datasheet gives none)";
  s += ": run `chokepoint bench --save` on that machine, or pass `--ceilings FILE` (a profile from "
       "`chokepoint bench --json`)";
  return s;
}

}  // namespace chokepoint::machine
