// Kernel statistics over the step windows: time per distinct kernel with its class,
// precision and tensor-core use; GEMM/conv time with and without tensor cores; kernels
// whose grid is smaller than the SM count; achieved-occupancy estimates.
#pragma once

#include <vector>

#include "analyses/index.h"
#include "analyses/steps.h"
#include "machine/ceilings.h"

namespace chokepoint::analyses {

struct KernelSummary {
  timeline::StringId name = 0;
  KernelClass kclass = KernelClass::kOther;
  Precision precision = Precision::kUnknown;
  TensorCores tensor_cores = TensorCores::kUnknown;
  int64_t calls = 0;
  TimeNs total_ns = 0;
  int64_t max_blocks = 0;          // largest grid (x*y*z) seen
  int64_t min_blocks = 0;          // smallest grid seen
  double mean_occupancy_pct = -1;  // time-weighted "est. achieved occupancy %", -1 unknown
};

struct KernelStats {
  std::vector<KernelSummary> kernels;  // sorted by total_ns, descending
  TimeNs kernel_ns = 0;                // all kernels in the windows
  // GEMM, conv and attention kernels (matrix work), by tensor-core use.
  TimeNs matrix_ns = 0;
  TimeNs matrix_tc_ns = 0;
  TimeNs matrix_no_tc_ns = 0;       // FP32/FP64 SIMT matrix kernels
  TimeNs matrix_fp32_no_tc_ns = 0;  // of which FP32 (TF32 or AMP would use tensor cores)
  // Kernels launched with fewer blocks than the device has SMs (less than one wave).
  TimeNs small_grid_ns = 0;
  // Kernel time weighted by blocks/SMs for those: what a full wave could shave off.
  TimeNs small_grid_ideal_ns = 0;
  int64_t small_grid_calls = 0;
  int32_t num_sms = -1;
};

KernelStats compute_kernel_stats(const timeline::Timeline& tl, const TimelineIndex& ix, const WindowMembership& wm,
                                 int32_t num_sms);

// Precision and tensor-core use of one GPU op (kernels only): the launching op's input
// types first, the kernel name second.
void kernel_precision(const timeline::Timeline& tl, const TimelineIndex& ix, size_t op, Precision* precision,
                      TensorCores* tc);

}  // namespace chokepoint::analyses
