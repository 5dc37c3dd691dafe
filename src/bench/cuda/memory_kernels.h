// Bandwidth kernels shared by the DRAM/L2 benchmarks and their self-test. 16-byte
// accesses, four independent ones per thread per iteration so that enough bytes are in
// flight to cover DRAM latency (Little's law: ~5 TB/s x ~600 ns = ~3 MB per GPU).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "bench/cuda/testcase.h"

namespace chokepoint::bench::gpu {

struct LaunchShape {
  int blocks = 0;
  int threads = 0;
};

// Blocks to fill every SM at the kernel's occupancy.
LaunchShape read_shape(const Context& ctx);
LaunchShape write_shape(const Context& ctx);
LaunchShape copy_shape(const Context& ctx);
LaunchShape l2_shape(const Context& ctx);

// XOR of every 32-bit word of p[0..n) into *sink (keeps the loads alive, and checkable).
void launch_read(const LaunchShape& sh, const int4* p, size_t n, unsigned* sink, cudaStream_t s);
// p[i] = {v, v ^ 1, v ^ 2, v ^ 3}.
void launch_write(const LaunchShape& sh, int4* p, size_t n, int v, cudaStream_t s);
void launch_copy(const LaunchShape& sh, const int4* src, int4* dst, size_t n, cudaStream_t s);
// Reads p[0..n) reps times through L2 only (ld.global.cg), XOR into *sink. n must be a
// multiple of 4 x blocks x threads (l2_elements rounds it).
void launch_l2_read(const LaunchShape& sh, const int4* p, size_t n, int reps, unsigned* sink, cudaStream_t s);
size_t l2_elements(const LaunchShape& sh, size_t target_bytes);

}  // namespace chokepoint::bench::gpu
