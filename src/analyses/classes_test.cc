#include <gtest/gtest.h>

#include "analyses/intervals.h"
#include "analyses/kernel_class.h"

namespace chokepoint::analyses {
namespace {

TEST(KernelClass, NamesFromRealTraces) {
  EXPECT_EQ(classify_kernel_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"), KernelClass::kGemm);
  EXPECT_EQ(classify_kernel_name("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_"
                                 "aligna4_alignc4_execute_kernel"),
            KernelClass::kGemm);
  EXPECT_EQ(classify_kernel_name("void cublasLt::splitKreduce_kernel<32, 16, int, float>"), KernelClass::kReduction);
  EXPECT_EQ(classify_kernel_name("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc"),
            KernelClass::kConv);
  EXPECT_EQ(classify_kernel_name("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16>"),
            KernelClass::kElementwise);
  EXPECT_EQ(classify_kernel_name("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7"),
            KernelClass::kAttention);
  EXPECT_EQ(classify_kernel_name("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>"),
            KernelClass::kElementwise);
  EXPECT_EQ(classify_kernel_name("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>"),
            KernelClass::kNormalization);
  EXPECT_EQ(classify_kernel_name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>"),
            KernelClass::kReduction);
  EXPECT_EQ(classify_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), KernelClass::kCommunication);
  EXPECT_EQ(classify_kernel_name("scale_rows_kernel"), KernelClass::kOther);
  EXPECT_EQ(classify_op_name("aten::addmm"), KernelClass::kGemm);
}

TEST(KernelClass, TensorCoresFromNamesThatLie) {
  // "xmma" in an FP32 FFMA kernel name does not mean tensor cores (docs/FORMATS.md "Kineto trace").
  EXPECT_EQ(tensor_cores_from_name(
                "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4"),
            TensorCores::kNo);
  EXPECT_EQ(tensor_cores_from_name("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>"),
            TensorCores::kNo);
  EXPECT_EQ(tensor_cores_from_name("void gemmSN_TN_kernel<float, 128, 16, 2, 4, 8, 9, false>"), TensorCores::kNo);
  EXPECT_EQ(tensor_cores_from_name("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN"), TensorCores::kYes);
  EXPECT_EQ(tensor_cores_from_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
                                   "execute_segment_k_off_kernel__5x_cublas"),
            TensorCores::kYes);
  EXPECT_EQ(precision_of_type("c10::BFloat16"), Precision::kBf16);
  EXPECT_EQ(precision_of_type("float"), Precision::kFp32);
  EXPECT_EQ(precision_from_name("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32"), Precision::kBf16);
}

TEST(Intervals, UnionAndOverlap) {
  Intervals iv;
  iv.add(0, 10);
  iv.add(5, 20);  // overlaps
  iv.add(30, 40);
  iv.add(32, 35);  // nested
  iv.build();
  EXPECT_EQ(iv.total(), 30);
  EXPECT_EQ(iv.overlap(15, 35), 10);
  EXPECT_EQ(iv.overlap(-5, 100), 30);
  EXPECT_EQ(iv.overlap(20, 30), 0);
  ASSERT_NE(iv.containing(33), nullptr);
  EXPECT_EQ(iv.containing(33)->first, 30);
  EXPECT_EQ(iv.containing(25), nullptr);
}

}  // namespace
}  // namespace chokepoint::analyses
