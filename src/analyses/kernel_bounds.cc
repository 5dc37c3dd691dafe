#include "analyses/kernel_bounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>

#include "analyses/op_shapes.h"
#include "analyses/roofline.h"

namespace chokepoint::analyses {

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::kMemory: return "memory-bound";
    case Bound::kCompute: return "compute-bound";
    case Bound::kLatency: return "latency/occupancy-bound";
    case Bound::kUnknown: break;
  }
  return "unknown";
}

namespace {

bool is_matrix(KernelClass k) {
  return k == KernelClass::kGemm || k == KernelClass::kConv || k == KernelClass::kAttention;
}

// The ceiling of `p` (INT8 in TOP/s).
std::optional<double> peak_of(const machine::Ceilings& c, Precision p) {
  if (p == Precision::kFp64) return c.fp64_tflops;
  if (p == Precision::kInt8) return c.int8_tops;
  return peak_tflops(c, p);
}

// Ceilings of the kernel's precision, and the achieved figures against them.
void place(KernelPoint& k, const machine::Ceilings& c) {
  if (k.ns > 0 && k.flops) k.tflops = *k.flops / k.ns / 1e3;
  if (k.ns > 0 && k.dram_bytes) k.dram_gbps = *k.dram_bytes / k.ns;
  if (k.flops && k.dram_bytes && *k.dram_bytes > 0) k.intensity = *k.flops / *k.dram_bytes;
  k.peak_tflops = peak_of(c, k.precision);
  k.hbm_gbps = c.hbm_gbps;
  if (k.peak_tflops && k.hbm_gbps && *k.hbm_gbps > 0) k.ridge = *k.peak_tflops * 1e3 / *k.hbm_gbps;
  if (k.tflops && k.peak_tflops && *k.peak_tflops > 0) k.compute_pct = 100 * *k.tflops / *k.peak_tflops;
  if (k.dram_gbps && k.hbm_gbps && *k.hbm_gbps > 0) k.memory_pct = 100 * *k.dram_gbps / *k.hbm_gbps;
}

// bench's figure of the bound's kind: the GEMM (or FFMA) of the precision for compute,
// DRAM bandwidth for memory.
void compare_with_bench(KernelPoint& k, const machine::Ceilings& c) {
  std::optional<double> v, achieved, mhz;
  if (k.bound == Bound::kMemory) {
    k.bench_figure = "HBM";
    v = c.hbm_gbps;
    achieved = k.dram_gbps;
  } else if (k.bound == Bound::kCompute) {
    achieved = k.tflops;
    switch (k.precision) {
      case Precision::kBf16:
      case Precision::kFp16: k.bench_figure = "bf16 GEMM", v = c.bf16_gemm_tflops, mhz = c.bf16_gemm_mhz; break;
      case Precision::kTf32: k.bench_figure = "tf32 GEMM", v = c.tf32_gemm_tflops, mhz = c.tf32_gemm_mhz; break;
      case Precision::kFp8: k.bench_figure = "fp8 GEMM", v = c.fp8_gemm_tflops, mhz = c.fp8_gemm_mhz; break;
      case Precision::kFp32: k.bench_figure = "FP32 FFMA", v = c.fp32_tflops; break;
      default: break;
    }
  }
  if (v && *v > 0) {
    k.bench_value = v;
    if (achieved) k.pct_of_bench = 100 * *achieved / *v;
    if (achieved && mhz && k.sm_clock_mhz && *k.sm_clock_mhz > 0) {
      k.bench_mhz = mhz;
      k.pct_of_bench_at_clock = 100 * *achieved * (*mhz / *k.sm_clock_mhz) / *v;
    }
  } else {
    k.bench_figure.clear();
  }
}

// Why a kernel that keeps no unit busy is slow: too small a grid, an occupancy capped by
// one resource, or the latency of dependent work at full occupancy.
void find_limiter(KernelPoint& k, const timeline::KernelMetrics* m, int num_sms) {
  if (k.grid_blocks > 0 && num_sms > 0 && k.grid_blocks < num_sms) {
    k.limiter = "grid";
    k.why += fmt::format("; its grid of {} blocks fills {} of the {} SMs", k.grid_blocks, k.grid_blocks, num_sms);
    k.advice =
        "Give it more parallel work: more blocks (a larger batch, split-K or smaller tiles), or several of these "
        "launches fused or run concurrently (streams, CUDA graphs); more independent work per thread hides latency.";
    return;
  }
  if (m != nullptr && k.theoretical_occupancy_pct && *k.theoretical_occupancy_pct < 50) {
    const std::array<std::pair<const char*, std::optional<double>>, 4> limits = {
        {{"shared memory", m->limit_shared_mem},
         {"registers", m->limit_registers},
         {"block size", m->limit_warps},
         {"blocks per SM", m->limit_blocks}}};
    const auto* best = &limits[0];
    for (const auto& l : limits) {
      if (l.second && (!best->second || *l.second < *best->second)) best = &l;
    }
    k.limiter = best->first;
    k.why += fmt::format("; theoretical occupancy {:.1f}%: {} allow{} {:.0f} block{} of {} threads per SM",
                         *k.theoretical_occupancy_pct, best->first, k.limiter == "registers" ? "" : "s",
                         best->second.value_or(0), best->second.value_or(0) == 1 ? "" : "s", k.block_threads);
    if (k.limiter == "shared memory") {
      k.advice = fmt::format(
          "Shared memory caps occupancy ({:.0f} KB per block): use smaller tiles or stage less per block, or "
          "give each block more threads so that one resident block holds enough warps to hide latency.",
          k.shared_mem_bytes.value_or(0) / 1e3);
    } else if (k.limiter == "registers") {
      k.advice = fmt::format(
          "{} registers per thread cap occupancy: bound them (__launch_bounds__, -maxrregcount, smaller "
          "per-thread tiles) if spills stay low.",
          k.registers);
    } else {
      k.advice = "Blocks are too small to fill an SM within its block limit: use blocks of 128-256 threads.";
    }
    return;
  }
  k.limiter = "latency";
  if (k.occupancy_pct) k.why += fmt::format("; occupancy {:.0f}%", *k.occupancy_pct);
  k.advice =
      "Neither compute nor memory is busy: the kernel waits on dependent instructions or memory latency. Give each "
      "thread independent work (ILP, unrolling, vector loads) or fuse it with neighbours; if it is short, launch "
      "overhead matters more than its body (CUDA graphs).";
}

void memory_advice(KernelPoint& k) {
  k.advice =
      "Bound by DRAM bandwidth: it gets faster only by moving fewer bytes: fuse it with the ops before and after it "
      "(torch.compile), keep tensors in bf16/fp8, avoid materializing intermediates.";
}

void compute_advice(KernelPoint& k) {
  if (k.measured && k.compute_pct && *k.compute_pct < 50 && (!k.tensor_pipe_pct || *k.tensor_pipe_pct < 50)) {
    k.advice =
        "The SMs are busy with other instructions than FLOPs (integer and address arithmetic, special functions, "
        "conversions): fewer instructions per element (vector loads, cheaper math, work hoisted out of loops), or "
        "fused with the kernels around it.";
  } else if (k.precision == Precision::kFp32 && is_matrix(k.kclass) && (!k.tensor_pipe_pct || *k.tensor_pipe_pct < 1)) {
    k.advice =
        "FP32 on the CUDA cores: allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True) or autocast to bf16 to "
        "run it on the tensor cores.";
  } else {
    k.advice =
        "Near the compute roof for its precision: gains come from less work or a cheaper precision (FP8 where "
        "accuracy allows), not from tuning this kernel.";
  }
}

// Measured: the busier unit, when it is busy, bounds the kernel; else latency/occupancy.
void decide_measured(KernelPoint& k, const timeline::KernelMetrics& m, const machine::Ceilings& c) {
  // How busy compute is: the SM and tensor-pipe counters; FLOP/s against the ceiling only
  // without them (a ceiling measured at a lower clock can be exceeded).
  double compute = std::max(k.sm_pct.value_or(0), k.tensor_pipe_pct.value_or(0));
  if (!k.sm_pct && !k.tensor_pipe_pct) compute = k.compute_pct.value_or(0);
  const double memory = k.memory_pct ? *k.memory_pct : m.memory_pct.value_or(0);
  const int sms = m.num_sms > 0 ? m.num_sms : c.num_sms;
  if (memory >= kBusyPct && memory >= compute) {
    k.bound = Bound::kMemory;
    k.why = fmt::format("DRAM {:.0f}% of its ceiling, compute {:.0f}%", memory, compute);
    memory_advice(k);
  } else if (compute >= kBusyPct) {
    k.bound = Bound::kCompute;
    std::string units;
    if (k.sm_pct) units += fmt::format("SM {:.0f}%", *k.sm_pct);
    if (k.tensor_pipe_pct) units += fmt::format("{}tensor pipe {:.0f}%", units.empty() ? "" : ", ", *k.tensor_pipe_pct);
    k.why = fmt::format("compute {:.0f}% busy{}, DRAM {:.0f}%", compute, units.empty() ? "" : " (" + units + ")",
                        memory);
    compute_advice(k);
  } else {
    k.bound = Bound::kLatency;
    k.why = fmt::format("compute {:.0f}% and DRAM {:.0f}% of their ceilings", compute, memory);
    find_limiter(k, &m, sms);
  }
}

}  // namespace

KernelPoint point_from_ncu(const timeline::KernelMetrics& m, const machine::Ceilings& c) {
  KernelPoint k;
  k.name = m.name;
  k.kclass = classify_kernel_name(m.name);
  k.measured = true;
  k.calls = 1;
  k.ns = m.duration_ns.value_or(0);
  std::optional<double> fp64 = m.fp64_flops;
  if (m.tensor_fp64_flops) fp64 = fp64.value_or(0) + *m.tensor_fp64_flops;
  const std::array<std::pair<Precision, std::optional<double>>, 7> parts = {{{Precision::kBf16, m.tensor_bf16_flops},
                                                                             {Precision::kFp16, m.tensor_fp16_flops},
                                                                             {Precision::kTf32, m.tensor_tf32_flops},
                                                                             {Precision::kFp8, m.tensor_fp8_flops},
                                                                             {Precision::kInt8, m.tensor_int8_ops},
                                                                             {Precision::kFp64, fp64},
                                                                             {Precision::kFp32, m.fp32_flops}}};
  double top = -1;
  for (const auto& [p, f] : parts) {
    if (!f) continue;
    k.flops = k.flops.value_or(0) + *f;
    if (*f > top) {
      top = *f;
      k.precision = p;
    }
  }
  if (top <= 0) k.precision = Precision::kUnknown;
  // No FLOP seen and the tensor path not counted: the FLOPs are unknown, not 0.
  const bool tensor_counted = m.tensor_bf16_flops || m.tensor_fp16_flops || m.tensor_tf32_flops || m.tensor_fp8_flops;
  if (top <= 0 && !tensor_counted) k.flops.reset();
  if (m.dram_read_bytes && m.dram_write_bytes) k.dram_bytes = *m.dram_read_bytes + *m.dram_write_bytes;
  k.l2_bytes = m.l2_bytes;
  k.sm_pct = m.sm_pct;
  k.tensor_pipe_pct = m.tensor_pipe_pct;
  k.occupancy_pct = m.occupancy_pct;
  k.theoretical_occupancy_pct = m.theoretical_occupancy_pct;
  if (m.sm_clock_hz) k.sm_clock_mhz = *m.sm_clock_hz / 1e6;
  k.grid_blocks = m.grid_size;
  k.block_threads = m.block_size;
  k.registers = m.registers_per_thread;
  k.shared_mem_bytes = m.shared_mem_per_block;
  place(k, c);
  decide_measured(k, m, c);
  compare_with_bench(k, c);
  return k;
}

namespace {

// Work of a trace's kernels from their launching ops' recorded shapes.
struct Work {
  double flops = 0, bytes = 0;
  double ns_flops = 0, ns_bytes = 0;
};

void decide_from_trace(KernelPoint& k, const machine::Ceilings& c, double occupancy_est) {
  const bool small_grid = k.grid_blocks > 0 && c.num_sms > 0 && k.grid_blocks < c.num_sms;
  // Kineto's estimate reads 0 where its occupancy calculator fails (cluster launches): unknown.
  const bool low_occupancy = occupancy_est > 0 && occupancy_est < 20;
  const double compute = k.compute_pct.value_or(0), memory = k.memory_pct.value_or(0);
  if (compute >= kBusyPct || memory >= kBusyPct) {
    k.bound = memory >= compute ? Bound::kMemory : Bound::kCompute;
    k.why = fmt::format("from its op's shapes: compute {:.0f}%, DRAM {:.0f}% of their ceilings", compute, memory);
  } else if (small_grid) {
    k.bound = Bound::kLatency;
    find_limiter(k, nullptr, c.num_sms);
    if (k.why.size() > 2 && k.why[0] == ';') k.why = k.why.substr(2);
  } else if (low_occupancy) {
    k.bound = Bound::kLatency;
    k.limiter = "occupancy";
    k.why = fmt::format("estimated occupancy {:.0f}%", occupancy_est);
    k.advice = "Few warps per SM: check its registers and shared memory per block (ncu's occupancy limiter).";
  } else if (k.intensity && k.ridge) {
    k.bound = *k.intensity < *k.ridge ? Bound::kMemory : Bound::kCompute;
    k.why = fmt::format("{:.1f} FLOP per byte against a ridge point of {:.0f}", *k.intensity, *k.ridge);
  } else if (is_matrix(k.kclass)) {
    k.bound = is_gemv_kernel(k.name) ? Bound::kMemory : Bound::kCompute;
    k.why = is_gemv_kernel(k.name) ? "a matrix-vector product streams its matrix" : "a matrix kernel";
  } else if (k.kclass == KernelClass::kElementwise || k.kclass == KernelClass::kReduction ||
             k.kclass == KernelClass::kNormalization || k.kclass == KernelClass::kCopy) {
    k.bound = Bound::kMemory;
    k.why = fmt::format("a {} kernel: a few FLOPs per byte", kernel_class_name(k.kclass));
  } else {
    k.why = k.kclass == KernelClass::kCommunication ? "communication: bound by the interconnect"
                                                    : "nothing in its name or op says what bounds it";
  }
  if (k.bound == Bound::kMemory) memory_advice(k);
  if (k.bound == Bound::kCompute) compute_advice(k);
  if (k.bound == Bound::kUnknown) k.advice = "Profile it: `chokepoint kernels --ncu -- CMD` measures what bounds it.";
  k.why += " (estimated from the trace; `chokepoint kernels --ncu` measures it)";
}

}  // namespace

namespace {

// The work of the picked kernels' launches in the analyzed windows, from their ops' shapes.
std::vector<Work> trace_work(const timeline::Timeline& tl, const Analysis& a,
                             const std::unordered_map<timeline::StringId, size_t>& pick) {
  std::vector<Work> work(pick.size());
  const auto& g = tl.gpu_ops;
  const auto& ks = a.kernels.kernels;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] != timeline::GpuOpKind::kKernel || a.membership.gpu_op[i] < 0) continue;
    auto it = pick.find(g.name[i]);
    const int32_t op = a.index.op_row[i];
    if (it == pick.end() || op < 0) continue;
    Work& w = work[it->second];
    const double dur = static_cast<double>(g.end[i] - g.start[i]);
    const auto& s = ks[it->second];
    const auto sh = s.kclass == KernelClass::kGemm ? gemm_shape(tl, op) : std::nullopt;
    const double eb = element_bytes(s.precision == Precision::kTf32 ? Precision::kFp32 : s.precision);
    if (sh && eb > 0) {
      w.flops += sh->flops();
      w.ns_flops += dur;
      w.bytes += sh->bytes(eb);
      w.ns_bytes += dur;
    } else if (!sh && !is_matrix(s.kclass)) {
      if (const double b = a.index.op_bytes[i]; b > 0) {
        w.bytes += b;
        w.ns_bytes += dur;
      }
    }
  }
  return work;
}

KernelPoint trace_point(const timeline::Timeline& tl, const Analysis& a, const KernelSummary& s, const Work& w) {
  KernelPoint k;
  k.name = tl.strings.view(s.name);
  k.kclass = s.kclass;
  k.precision = s.precision;
  k.calls = s.calls;
  if (a.kernels.kernel_ns > 0) k.time_pct = 100 * static_cast<double>(s.total_ns) / a.kernels.kernel_ns;
  k.grid_blocks = s.max_blocks;
  if (s.mean_occupancy_pct >= 0) k.occupancy_pct = s.mean_occupancy_pct;
  // Rates over the launches whose work is known.
  if (w.ns_flops > 0) {
    k.ns = w.ns_flops;
    k.flops = w.flops;
  }
  place(k, a.ceilings);
  if (w.ns_bytes > 0) {
    k.dram_gbps = w.bytes / w.ns_bytes;
    if (k.flops) k.intensity = w.flops / w.bytes;
    if (k.hbm_gbps && *k.hbm_gbps > 0) k.memory_pct = 100 * *k.dram_gbps / *k.hbm_gbps;
  }
  // Totals over all its launches.
  k.ns = static_cast<double>(s.total_ns);
  if (w.ns_flops > 0) k.flops = w.flops * k.ns / w.ns_flops;
  if (w.ns_bytes > 0) k.dram_bytes = w.bytes * k.ns / w.ns_bytes;
  decide_from_trace(k, a.ceilings, s.mean_occupancy_pct);
  compare_with_bench(k, a.ceilings);
  return k;
}

}  // namespace

std::vector<KernelPoint> points_from_trace(const timeline::Timeline& tl, const Analysis& a, size_t top) {
  const auto& ks = a.kernels.kernels;
  const size_t n = top == 0 ? ks.size() : std::min(top, ks.size());
  std::unordered_map<timeline::StringId, size_t> pick;
  for (size_t i = 0; i < n; ++i) pick.emplace(ks[i].name, i);
  const std::vector<Work> work = trace_work(tl, a, pick);
  std::vector<KernelPoint> out;
  for (size_t i = 0; i < n; ++i) out.push_back(trace_point(tl, a, ks[i], work[i]));
  return out;
}

}  // namespace chokepoint::analyses
