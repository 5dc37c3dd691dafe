// The testcase registry: one explicit list per mode, in run order (docs/ARCHITECTURE.md
// convention 9). Keys must match bench/expectations.cc, which judges them.
#include "bench/cuda/gemm.h"
#include "bench/cuda/testcase.h"

namespace chokepoint::bench::gpu {

TestcaseList make_benchmarks() {
  TestcaseList t;
  t.push_back(make_pageable_copy(true));
  t.push_back(make_pageable_copy(false));
  t.push_back(make_pinned_copy(true));
  t.push_back(make_pinned_copy(false));
  t.push_back(make_bidir_copy());
  t.push_back(make_d2d_memcpy());
  t.push_back(make_dram_test(0));
  t.push_back(make_dram_test(1));
  t.push_back(make_dram_test(2));
  t.push_back(make_l2_read());
  t.push_back(make_launch_latency());
  t.push_back(make_graph_node_latency());
  t.push_back(make_launch_sync_roundtrip());
  t.push_back(make_ffma());  // before the GEMMs: it measures the SM clock under load
  for (int p = 0; p < kGemmCount; ++p) t.push_back(make_gemm(p));
  return t;
}

TestcaseList make_selftests() {
  TestcaseList t;
  t.push_back(make_selftest_timing());
  t.push_back(make_selftest_copies());
  t.push_back(make_selftest_memory_kernels());
  t.push_back(make_selftest_ffma());
  for (int p = 0; p < kGemmCount; ++p) t.push_back(make_selftest_gemm(p));
  return t;
}

}  // namespace chokepoint::bench::gpu
