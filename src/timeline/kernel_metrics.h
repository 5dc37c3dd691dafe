// Per-kernel hardware counters of one profiled launch (Nsight Compute): what a kernel
// achieved, in base units (ns, bytes, FLOPs, percent). Filled by importers/ncu from
// `ncu --csv --page raw`; read by the kernel roofline (analyses/kernel_bounds.h). A
// metric the file did not hold stays nullopt, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chokepoint::timeline {

struct KernelMetrics {
  std::string name;    // "Kernel Name" as ncu prints it (demangled)
  int64_t id = -1;     // ncu's launch ID
  std::string device;  // "NVIDIA H200" (device__attribute_display_name), "" unknown
  int32_t num_sms = -1;
  int32_t cc_major = -1, cc_minor = -1;
  std::optional<double> duration_ns;                // gpu__time_duration.sum
  std::optional<double> dram_read_bytes;            // dram__bytes_read.sum
  std::optional<double> dram_write_bytes;           // dram__bytes_write.sum
  std::optional<double> l2_bytes;                   // lts__t_bytes.sum (else lts__t_sectors.sum x 32)
  std::optional<double> sm_pct;                     // sm__throughput.avg.pct_of_peak_sustained_elapsed
  std::optional<double> memory_pct;                 // gpu__compute_memory_throughput ... (any memory unit)
  std::optional<double> occupancy_pct;              // sm__warps_active.avg.pct_of_peak_sustained_active
  std::optional<double> theoretical_occupancy_pct;  // sm__maximum_warps_per_active_cycle_pct
  // Blocks per SM each resource allows (launch__occupancy_limit_*).
  std::optional<double> limit_shared_mem, limit_registers, limit_blocks, limit_warps;
  std::optional<double> fp32_flops;  // 2 x FFMA + FMUL + FADD thread instructions
  std::optional<double> fp64_flops;  // 2 x DFMA + DMUL + DADD
  // Tensor-path FLOPs by source precision (sm__ops_path_tensor_src_*.sum: one op per FLOP).
  std::optional<double> tensor_bf16_flops, tensor_fp16_flops, tensor_tf32_flops, tensor_fp8_flops, tensor_fp64_flops;
  std::optional<double> tensor_int8_ops;
  std::optional<double> sm_clock_hz;        // smsp__cycles_elapsed.avg.per_second: the clock it ran at
  std::optional<double> tensor_pipe_pct;    // sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
  int64_t grid_size = -1, block_size = -1;  // blocks, threads per block
  std::string grid, block;                  // "(2112, 1, 1)"
  int32_t registers_per_thread = -1;
  std::optional<double> shared_mem_per_block;  // bytes, static + dynamic
};

struct KernelMetricsFile {
  std::vector<KernelMetrics> kernels;  // in the file's order (ncu's launch order)
  std::string tool_version;            // "" unknown
  uint64_t skipped_lines = 0;          // ==PROF==/==WARNING== and program output lines
  std::vector<std::string> messages;   // ==ERROR== lines, and ==WARNING== ones, as ncu said them
};

}  // namespace chokepoint::timeline
