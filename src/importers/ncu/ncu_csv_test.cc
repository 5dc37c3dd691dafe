// The ncu CSV importer on the exports recorded on the H200 (tests/data/kernels/gpu_ncu.sh:
// ncu 2025.3, a bf16 cuBLAS GEMM 8192^3, an axpy on 1 GiB arrays, a 4x64 dependent FMA
// chain, a kernel whose occupancy shared memory caps) and on the format's hazards.
#include "importers/ncu/ncu_csv.h"

#include <gtest/gtest.h>

namespace chokepoint::importers {
namespace {

const std::string kDir = std::string(CHOKEPOINT_TEST_DATA) + "/kernels/";

TEST(NcuCsv, RawPageWithExplicitMetrics) {
  auto r = read_ncu_csv(kDir + "raw_metrics.csv.gz");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& f = r.value();
  ASSERT_EQ(f.kernels.size(), 12u);  // 3 rounds of 4 kernels
  EXPECT_GE(f.skipped_lines, 4u);    // ==PROF== lines and the program's "ok"
  const auto& gemm = f.kernels[0];
  EXPECT_EQ(gemm.name, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
  EXPECT_EQ(gemm.device, "NVIDIA H200");
  EXPECT_EQ(gemm.num_sms, 132);
  EXPECT_EQ(gemm.cc_major, 9);
  EXPECT_DOUBLE_EQ(*gemm.duration_ns, 1229536);
  EXPECT_DOUBLE_EQ(*gemm.dram_read_bytes, 1249942784);
  EXPECT_DOUBLE_EQ(*gemm.l2_bytes, 8321421920);
  EXPECT_DOUBLE_EQ(*gemm.sm_pct, 93.44);
  EXPECT_EQ(gemm.grid_size, 132);
  EXPECT_EQ(gemm.registers_per_thread, 168);
  EXPECT_DOUBLE_EQ(*gemm.shared_mem_per_block, 189660);  // "189,660" byte/block
  EXPECT_FALSE(gemm.tensor_bf16_flops.has_value());      // not asked for in this export
  const auto& axpy = f.kernels[1];
  EXPECT_EQ(axpy.name, "axpy(float, const float *, float *, unsigned long)");
  EXPECT_DOUBLE_EQ(*axpy.fp32_flops, 2.0 * 268435456);  // one FFMA per element, 2^28 elements
  EXPECT_DOUBLE_EQ(*axpy.dram_write_bytes, 1055239424);
  EXPECT_EQ(axpy.grid, "(2112, 1, 1)");
  const auto& chain = f.kernels[2];
  EXPECT_DOUBLE_EQ(*chain.fp32_flops, 2.0 * 268435456 + 256);  // 256 threads x 2^20 FFMAs, 256 FMULs
  EXPECT_EQ(chain.grid_size, 4);
  const auto& smem = f.kernels[3];
  EXPECT_DOUBLE_EQ(*smem.limit_shared_mem, 1);
  EXPECT_DOUBLE_EQ(*smem.theoretical_occupancy_pct, 1.56);
}

TEST(NcuCsv, ImportOfAFullReport) {
  auto r = read_ncu_csv(kDir + "full_raw.csv.gz");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& f = r.value();
  ASSERT_EQ(f.kernels.size(), 4u);
  const auto& gemm = f.kernels[0];
  EXPECT_DOUBLE_EQ(*gemm.duration_ns, 1229440);       // "1.229440" ms
  EXPECT_NEAR(*gemm.dram_read_bytes, 1.250039e9, 1);  // Gbyte: SI
  // The tensor path's bf16 ops: 2 x 8192^3 FLOPs and the tile padding (26 x 320 rows for 8192).
  EXPECT_DOUBLE_EQ(*gemm.tensor_bf16_flops, 1116691496960);
  EXPECT_NEAR(*gemm.tensor_bf16_flops / (2.0 * 8192 * 8192 * 8192), 8320.0 / 8192, 1e-3);
  EXPECT_DOUBLE_EQ(*gemm.tensor_fp16_flops, 0);
  EXPECT_NEAR(*gemm.tensor_pipe_pct, 93.43, 0.01);
  EXPECT_NEAR(*gemm.l2_bytes, 256734842.0 * 32, 1);       // from lts__t_sectors
  EXPECT_NEAR(*gemm.shared_mem_per_block, 189660, 1e-6);  // "189.660000" Kbyte/block
  // FP32 from .sum.per_cycle_elapsed x smsp__cycles_elapsed.avg: the axpy's 2^28 FFMAs.
  EXPECT_NEAR(*f.kernels[1].fp32_flops, 2.0 * 268435456, 2.0 * 268435456 * 1e-5);
}

TEST(NcuCsv, DetailsPageIsRefusedWithTheFix) {
  auto r = read_ncu_csv(kDir + "full_details.csv.gz");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--page raw"), std::string::npos);
}

TEST(NcuCsv, AnotherUsersRun) {
  // gpu_ncu.sh's run as a user without root: this machine lets everyone read counters.
  auto r = read_ncu_csv(kDir + "nonroot.txt");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().kernels.size(), 1u);
  EXPECT_EQ(r.value().kernels[0].name, "axpy(float, const float *, float *, unsigned long)");
  ASSERT_FALSE(r.value().messages.empty());  // the unmodified-clocks warning
}

TEST(NcuCsv, PermissionErrorIsSaid) {
  // ncu's message where counters are for admins only (NVIDIA's ERR_NVGPUCTRPERM page).
  const std::string text =
      "==PROF== Connected to process 42 (/bin/app)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
      "the target device 0.\n"
      "==PROF== Disconnected from process 42\n";
  auto r = parse_ncu_csv(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ERR_NVGPUCTRPERM"), std::string::npos) << r.status().message();
}

TEST(NcuCsv, Hazards) {
  // Quoted commas and quotes, CRLF, a short row, a missing units row.
  const std::string text =
      "==PROF== Connected\r\n"
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\r\n"
      "\"0\",\"f(int, \"\"x\"\")\",\"1,000\"\r\n"
      "\"1\",\"short\"\r\n"
      "\"2\",\"g\",\"nan\"\r\n";
  auto r = parse_ncu_csv(text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().kernels.size(), 2u);
  EXPECT_EQ(r.value().kernels[0].name, "f(int, \"x\")");
  EXPECT_DOUBLE_EQ(*r.value().kernels[0].duration_ns, 1000);
  EXPECT_FALSE(r.value().kernels[1].duration_ns.has_value());
  EXPECT_FALSE(parse_ncu_csv("").ok());
  EXPECT_FALSE(parse_ncu_csv("\"ID\",\"Kernel Name\"\n").ok());
  double v = 5;
  EXPECT_TRUE(to_base_unit("Kibyte", &v));
  EXPECT_DOUBLE_EQ(v, 5120);
  EXPECT_FALSE(to_base_unit("Gbyte/s", &v));
  EXPECT_TRUE(looks_like_ncu_csv("==PROF== x\n\"ID\",\"Process ID\",\"Process Name\"\n"));
  EXPECT_FALSE(looks_like_ncu_csv("{\"traceEvents\": []}"));
}

TEST(NcuCsv, IntegersOutOfRangeAreLeftUnknown) {
  // The fuzzer's find (CI, stop 36): a multiprocessor count of 2.8e9 was cast to int32.
  const std::string text =
      "\"ID\",\"Kernel Name\",\"CC\",\"device__attribute_multiprocessor_count\",\"launch__grid_size\","
      "\"launch__registers_per_thread\",\"gpu__time_duration.sum\"\n"
      "\"1e30\",\"k\",\"99999999999.0\",\"2795850000\",\"1e300\",\"inf\",\"1,000\"\n"
      "\"2\",\"g\",\"9.0\",\"132\",\"528\",\"168\",\"2,000\"\n";
  auto r = parse_ncu_csv(text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().kernels.size(), 2u);
  const auto& bad = r.value().kernels[0];
  EXPECT_EQ(bad.num_sms, timeline::KernelMetrics{}.num_sms);
  EXPECT_EQ(bad.cc_major, -1);
  EXPECT_EQ(bad.grid_size, timeline::KernelMetrics{}.grid_size);
  EXPECT_EQ(bad.registers_per_thread, timeline::KernelMetrics{}.registers_per_thread);
  EXPECT_DOUBLE_EQ(*bad.duration_ns, 1000);  // the row's other figures stand
  const auto& good = r.value().kernels[1];
  EXPECT_EQ(good.id, 2);
  EXPECT_EQ(good.num_sms, 132);
  EXPECT_EQ(good.cc_major, 9);
  EXPECT_EQ(good.cc_minor, 0);
  EXPECT_EQ(good.grid_size, 528);
  EXPECT_EQ(good.registers_per_thread, 168);
}

}  // namespace
}  // namespace chokepoint::importers
