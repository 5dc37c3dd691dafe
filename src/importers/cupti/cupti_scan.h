// What a CUPTI trace file says about its process without importing it: the pid, the
// trace window, the GPUs its kernels ran on and whether any is an NCCL kernel. `analyze`
// reads the per-process files of a multi-GPU `run --trace` outside their recording (no
// RANK to go by) as ranks from this: one process per GPU (pipeline/rank_inputs).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "base/status.h"

namespace chokepoint::importers {

struct CuptiFileScan {
  int64_t pid = -1;
  uint32_t window = 0;        // 0 the whole process, N its Nth trace window
  std::set<int32_t> devices;  // CUDA ordinals of its kernels
  int64_t kernels = 0;
  bool nccl = false;  // a kernel whose name holds "nccl"
};

// Streams the file once (plain or gzip); an error when it is not a trace of this format.
// A cut-off file scans up to the cut.
Result<CuptiFileScan> scan_cupti_file(const std::string& path);

}  // namespace chokepoint::importers
