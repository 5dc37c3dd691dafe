#include "machine/gpu_match.h"

#include <gtest/gtest.h>

#include <string>

#include "machine/ceilings.h"

namespace chokepoint::machine {
namespace {

constexpr int64_t kGiB = 1024LL * 1024 * 1024;

std::string label(std::string_view name, int32_t sms = -1, int64_t memory = -1) {
  const GpuMatch g = match_gpu(name, sms, memory);
  return g.model == nullptr ? "none" : g.model->label;
}

TEST(GpuMatch, WholeTokensNotFragments) {
  EXPECT_EQ(label("NVIDIA L4"), "L4");
  EXPECT_EQ(label("NVIDIA L40"), "L40");
  EXPECT_EQ(label("NVIDIA L40S"), "L40S");
  EXPECT_EQ(label("NVIDIA H20"), "H20");
  EXPECT_EQ(label("NVIDIA H200"), "H200 SXM");
  EXPECT_EQ(label("NVIDIA B200"), "B200");
  EXPECT_EQ(label("NVIDIA GB200"), "GB200");
  EXPECT_EQ(label("NVIDIA A10"), "A10");
  EXPECT_EQ(label("NVIDIA A10G"), "A10G");
  EXPECT_EQ(label("NVIDIA A100-SXM4-80GB"), "A100 SXM 80GB");
  EXPECT_EQ(label("Tesla T4"), "T4");
  EXPECT_EQ(label("NVIDIA GeForce RTX 4090"), "RTX 4090");
  EXPECT_EQ(label("NVIDIA GeForce RTX 3090"), "RTX 3090");
  EXPECT_EQ(label("NVIDIA GeForce RTX 5090"), "RTX 5090");
  EXPECT_EQ(label("NVIDIA RTX A6000"), "RTX A6000");
  EXPECT_EQ(label("NVIDIA RTX 6000 Ada Generation"), "RTX 6000 Ada");
  EXPECT_EQ(label("Orin"), "Jetson AGX Orin 64GB");
  // Turing's Quadro RTX 6000 is not the Ada part; nor is an unknown name anything.
  EXPECT_EQ(label("Quadro RTX 6000"), "none");
  EXPECT_EQ(label("NVIDIA Future GPU"), "none");
  EXPECT_EQ(label(""), "none");
}

TEST(GpuMatch, FormFactorByNameSuffix) {
  EXPECT_EQ(label("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(label("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(label("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(label("NVIDIA H200 NVL"), "H200 NVL");
  EXPECT_EQ(label("NVIDIA H800 PCIe"), "H800 PCIe");
  EXPECT_EQ(label("NVIDIA H800"), "H800 SXM");
  EXPECT_EQ(label("NVIDIA A100-SXM4-40GB"), "A100 SXM 40GB");
  EXPECT_EQ(label("NVIDIA A100-PCIE-40GB"), "A100 PCIe 40GB");
  EXPECT_EQ(label("NVIDIA A100 80GB PCIe"), "A100 PCIe 80GB");
  EXPECT_EQ(label("Tesla V100-SXM2-16GB"), "V100 SXM2");
  EXPECT_EQ(label("Tesla V100-PCIE-32GB"), "V100 PCIe");
  EXPECT_TRUE(match_gpu("NVIDIA H100 PCIe", -1, -1).note.empty());
}

// A name without a suffix: the SM count, then the memory size decide; a tie says so.
TEST(GpuMatch, FormFactorBySmsAndMemory) {
  EXPECT_EQ(label("NVIDIA H100", 114, 85 * 1000LL * 1000 * 1000), "H100 PCIe");
  EXPECT_EQ(label("NVIDIA H100", 132, 85 * 1000LL * 1000 * 1000), "H100 SXM");
  EXPECT_EQ(label("NVIDIA H100", 132, 94 * kGiB), "H100 NVL");
  EXPECT_EQ(label("NVIDIA A100", 108, 40 * kGiB), "A100 SXM 40GB");
  const GpuMatch tie = match_gpu("NVIDIA H100", -1, -1);
  EXPECT_EQ(std::string(tie.model->label), "H100 SXM");
  EXPECT_NE(tie.note.find("assumed H100 SXM"), std::string::npos) << tie.note;
}

TEST(GpuMatch, MigSliceByName) {
  const GpuMatch g = match_gpu("NVIDIA H100 80GB HBM3 MIG 3g.40gb", -1, -1);
  ASSERT_NE(g.model, nullptr);
  EXPECT_EQ(std::string(g.model->label), "H100 SXM");
  EXPECT_TRUE(g.mig);
  EXPECT_EQ(g.mig_profile, "3g.40gb");
  EXPECT_DOUBLE_EQ(g.sm_share, 3.0 / 7);  // compute slices without an SM count
  EXPECT_DOUBLE_EQ(g.memory_share, 0.5);
  EXPECT_NE(g.note.find("MIG slice 3g.40gb"), std::string::npos) << g.note;

  const GpuMatch s = match_gpu("NVIDIA H100 80GB HBM3 MIG 3g.40gb", 60, 40 * kGiB);
  EXPECT_DOUBLE_EQ(s.sm_share, 60.0 / 132);  // the reported SMs win
  EXPECT_NE(s.note.find("60 of 132 SMs"), std::string::npos) << s.note;
}

TEST(GpuMatch, MigSliceBySmCount) {
  const GpuMatch g = match_gpu("NVIDIA A100-SXM4-80GB", 42, 40 * kGiB);
  ASSERT_NE(g.model, nullptr);
  EXPECT_EQ(std::string(g.model->label), "A100 SXM 80GB");
  EXPECT_TRUE(g.mig);
  EXPECT_DOUBLE_EQ(g.sm_share, 42.0 / 108);
  EXPECT_DOUBLE_EQ(g.memory_share, 0.5);
}

TEST(GpuMatch, NoMigOnAWholePart) {
  const GpuMatch g = match_gpu("NVIDIA H200", 132, 150109880320);
  EXPECT_FALSE(g.mig);
  EXPECT_DOUBLE_EQ(g.sm_share, 1.0);
  EXPECT_TRUE(g.note.empty()) << g.note;
}

DeviceSpec spec(const char* name, int sms, int64_t memory, int cc) {
  DeviceSpec d;
  d.name = name;
  d.num_sms = sms;
  d.memory_bytes = memory;
  d.cc_major = cc;
  d.cc_minor = 0;
  return d;
}

// The figures that follow the match: the L40S is not analyzed as an L4, an H100 PCIe
// not with the SXM's, a MIG slice with its share.
TEST(GpuMatch, CeilingsFollowTheMatch) {
  const Ceilings l40s = published_ceilings_for(spec("NVIDIA L40S", 142, 48 * kGiB, 8));
  EXPECT_EQ(l40s.source, "published:L40S");
  EXPECT_DOUBLE_EQ(*l40s.hbm_gbps, 864);
  EXPECT_DOUBLE_EQ(*l40s.bf16_tflops, 362);
  const Ceilings l4 = published_ceilings_for(spec("NVIDIA L4", 58, 24 * kGiB, 8));
  EXPECT_DOUBLE_EQ(*l4.hbm_gbps, 300);

  const Ceilings pcie = published_ceilings_for(spec("NVIDIA H100 PCIe", 114, 80 * kGiB, 9));
  EXPECT_EQ(pcie.gpu, "H100 PCIe");
  EXPECT_DOUBLE_EQ(*pcie.hbm_gbps, 2000);
  EXPECT_DOUBLE_EQ(*pcie.bf16_tflops, 756);
  EXPECT_DOUBLE_EQ(*pcie.fp64_tflops, 26);
  EXPECT_EQ(pcie.pcie_gen, 5);

  const Ceilings mig = published_ceilings_for(spec("NVIDIA H100 80GB HBM3 MIG 3g.40gb", 60, 40 * kGiB, 9));
  EXPECT_EQ(mig.gpu, "H100 SXM MIG 3g.40gb");
  EXPECT_EQ(mig.source, "published:H100 SXM MIG 3g.40gb");
  EXPECT_DOUBLE_EQ(*mig.bf16_tflops, 989.0 * 60 / 132);
  EXPECT_DOUBLE_EQ(*mig.hbm_gbps, 3350.0 / 2);
  EXPECT_DOUBLE_EQ(*mig.l2_mb, 25);
  EXPECT_DOUBLE_EQ(*mig.pcie_theoretical_gbps, 63);  // the link is not sliced
  EXPECT_EQ(mig.num_sms, 60);
  EXPECT_FALSE(mig.note.empty());

  const Ceilings b200 = published_ceilings_for(spec("NVIDIA B200", 148, 180 * kGiB, 10));
  EXPECT_DOUBLE_EQ(*b200.fp4_tflops, 9000);
  EXPECT_DOUBLE_EQ(*b200.fp8_tflops, 4500);
}

TEST(GpuMatch, MissingCeilingSaysWhichAndHow) {
  const Ceilings c = published_ceilings_for(spec("NVIDIA Future GPU", 200, 100 * kGiB, 12));
  const std::string s = missing_ceiling(c, "memory bandwidth");
  EXPECT_NE(s.find("no memory bandwidth ceiling for \"NVIDIA Future GPU\" (not in the published table)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("chokepoint bench --save"), std::string::npos);
  EXPECT_NE(s.find("--ceilings FILE"), std::string::npos);
  EXPECT_NE(missing_ceiling(c, "FP32 TFLOP/s and TF32 TFLOP/s").find("TF32 TFLOP/s ceilings for"), std::string::npos);
  // A published GPU whose datasheet lacks the figure: V100 has no TF32.
  const Ceilings v100 = published_ceilings_for(spec("Tesla V100-SXM2-32GB", 80, 32 * kGiB, 7));
  EXPECT_NE(missing_ceiling(v100, "TF32 TFLOP/s").find("the V100 SXM2 datasheet gives none"), std::string::npos);
}

}  // namespace
}  // namespace chokepoint::machine
