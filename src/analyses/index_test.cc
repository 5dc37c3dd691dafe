// The bytes each kernel moved by its ATen op's recorded shapes (TimelineIndex::op_bytes).
#include "analyses/index.h"

#include <gtest/gtest.h>

#include "analyses/op_shapes.h"
#include "analyses/testing/timeline_builder.h"

namespace chokepoint::analyses {
namespace {

using chokepoint::testing::TimelineBuilder;

int32_t row_named(const timeline::Timeline& tl, std::string_view name) {
  for (size_t i = 0; i < tl.gpu_ops.size(); ++i) {
    if (tl.strings.view(tl.gpu_ops.name[i]) == name) return static_cast<int32_t>(i);
  }
  return -1;
}

// An op that launched two kernels shares its bytes by their durations: counted whole for
// each, cuDNN's LSTM kernels read 284% of the H200's HBM rate (tests/data/pairs/lstm_lm).
TEST(OpBytes, AnOpsKernelsShareItsBytesByTheirDurations) {
  TimelineBuilder b;
  b.step(1, 0, 100);
  b.op_with_inputs("aten::add", 0, 10, 5, {{"float", {1000, 250}}, {"float", {1000, 250}}});
  b.kernel("vectorized_elementwise_kernel", 1, 10, 30, 1024, "cudaLaunchKernel", 3, 5);
  b.kernel("elementwise_kernel_tail", 2, 45, 10, 1024, "cudaLaunchKernel", 3, 5);
  const timeline::Timeline& tl = b.finish();
  const TimelineIndex ix = build_index(tl);
  const double op = 3 * 1000.0 * 250 * 4;  // two inputs read, an output as large written
  EXPECT_DOUBLE_EQ(ix.op_bytes[row_named(tl, "vectorized_elementwise_kernel")], op * 30 / 40);
  EXPECT_DOUBLE_EQ(ix.op_bytes[row_named(tl, "elementwise_kernel_tail")], op * 10 / 40);
}

// A GEMM's operands belong to its GEMM kernel (sized by gemm_shape): its split-K reduction
// gets none of them (gemv_batch's read 3,269% of HBM), and a reducing op writes next to
// nothing (fp32_gemm's bias-gradient sums read 118%).
TEST(OpBytes, GemmOperandsAreNotTheSplitKReductionsAndASumWritesLittle) {
  TimelineBuilder b;
  b.step(1, 0, 100);
  b.op_with_inputs("aten::mm", 0, 10, 5, {{"c10::Half", {1, 8192}}, {"c10::Half", {8192, 8192}}});
  b.kernel("gemv2T_kernel_val", 1, 10, 30, 132, "cudaLaunchKernel", 3, 5);
  b.kernel("splitKreduce_kernel", 2, 41, 2, 8, "cudaLaunchKernel", 3, 5);
  b.op_with_inputs("aten::sum", 20, 5, 6, {{"float", {8192, 4096}}});
  b.kernel("reduce_kernel", 21, 50, 40, 1024, "cudaLaunchKernel", 3, 6);
  // torch.max(a, b) is elementwise: its trace names it aten::max too.
  b.op_with_inputs("aten::max", 30, 5, 8, {{"float", {1000}}, {"float", {1000}}});
  b.kernel("max_elementwise_kernel", 31, 95, 2, 8, "cudaLaunchKernel", 3, 8);
  const timeline::Timeline& tl = b.finish();
  const TimelineIndex ix = build_index(tl);
  EXPECT_EQ(ix.op_bytes[row_named(tl, "splitKreduce_kernel")], 0);
  EXPECT_DOUBLE_EQ(ix.op_bytes[row_named(tl, "reduce_kernel")], 8192.0 * 4096 * 4);
  EXPECT_DOUBLE_EQ(ix.op_bytes[row_named(tl, "max_elementwise_kernel")], 3 * 1000.0 * 4);
}

}  // namespace
}  // namespace chokepoint::analyses
