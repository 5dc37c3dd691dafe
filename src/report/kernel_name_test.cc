#include "report/kernel_name.h"

#include <gtest/gtest.h>

namespace chokepoint::report {
namespace {

constexpr const char* kAtenAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)";

TEST(KernelName, ShortNamesPassThrough) {
  EXPECT_EQ(shorten_kernel_name("ampere_sgemm_128x64_nn", 40), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(shorten_kernel_name("Memcpy HtoD (Pageable -> Device)", 40), "Memcpy HtoD (Pageable -> Device)");
}

TEST(KernelName, SignatureLosesReturnTypeAndParameters) {
  EXPECT_EQ(shorten_kernel_name(kAtenAdd, 200),
            "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3> >");
}

TEST(KernelName, TemplatesCollapseToTheirOperationThenNamespacesGo) {
  EXPECT_EQ(shorten_kernel_name(kAtenAdd, 60), "at::native::vectorized_elementwise_kernel<CUDAFunctor_add>");
  EXPECT_EQ(shorten_kernel_name(kAtenAdd, 50), "vectorized_elementwise_kernel<CUDAFunctor_add>");
  EXPECT_EQ(shorten_kernel_name(kAtenAdd, 40), "vectorized_elementwi...<CUDAFunctor_add>");
}

TEST(KernelName, OperationIsTheFirstFunctorOpOrKernelNamed) {
  EXPECT_EQ(shorten_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                                "at::native::BinaryFunctor<float, float, float, "
                                "at::native::binary_internal::MulFunctor<float> >, "
                                "at::detail::Array<char*, 3> >(int, at::detail::Array<char*, 3>)",
                                60),
            "at::native::vectorized_elementwise_kernel<MulFunctor>");
  EXPECT_EQ(shorten_kernel_name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<"
                                "float, at::native::MeanOps<float, float, float, float>, "
                                "unsigned int, float, 4> >(at::native::ReduceOp<float, "
                                "at::native::MeanOps<float, float, float, float>, unsigned int, "
                                "float, 4>)",
                                60),
            "at::native::reduce_kernel<MeanOps>");
  EXPECT_EQ(shorten_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                                "at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::"
                                "{lambda()#2}::operator()() const::{lambda(float)#1}, "
                                "std::array<char*, 2ul> >(int, std::array<char*, 2ul>)",
                                50),
            "vectorized_elementwise_kernel<tanh_kernel_cuda>");
  EXPECT_EQ(shorten_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                                "at::native::(anonymous namespace)::launch_clamp_scalar("
                                "at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()"
                                "() const::{lambda(float)#1}, std::array<char*, 2ul> >(int)",
                                50),
            "vectorized_elementwise_kernel<launch_clamp_scalar>");
  EXPECT_EQ(shorten_kernel_name("void nchwToNhwcKernel<float, float, float, true, false, "
                                "(cudnnKernelDataType_t)0>(int, int, int, int, float const*, "
                                "float*, float, float)",
                                30),
            "nchwToNhwcKernel<...>");
}

TEST(KernelName, ParenthesesAreNotTemplates) {
  EXPECT_EQ(shorten_kernel_name("Memcpy HtoD (Pageable -> Device)", 29), "Memcpy HtoD (Pageable -> D...");
  EXPECT_EQ(shorten_kernel_name("f<int, g<float>>(x<y>)::h<z>", 24), "f<...>(x<y>)::h<...>");
}

TEST(KernelName, CutTextEndsInEllipsis) {
  EXPECT_EQ(shorten_kernel_name(kAtenAdd, 20), "vectorized_elemen...");
  EXPECT_EQ(shorten_kernel_name("abcdefghijklmnop", 3), "abcde...");  // 8 columns at least
}

TEST(KernelName, CutlassWrapperShowsTheKernelItRuns) {
  EXPECT_EQ(shorten_kernel_name("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>"
                                "(cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params)",
                                48),
            "cutlass_80_simt_sgemm_128x64_8x5_nn_align1");
}

TEST(KernelName, AnonymousNamespacesAndLambdasDoNotConfuseTheParser) {
  EXPECT_EQ(shorten_kernel_name("void (anonymous namespace)::softmax_warp_forward<float, float, "
                                "float, 10, false>(float*, float const*, int, int, int)",
                                60),
            "(anonymous namespace)::softmax_warp_forward<...>");
  EXPECT_EQ(shorten_kernel_name("void at::native::elementwise_kernel<128, 2, "
                                "at::native::gpu_kernel_impl<at::native::(anonymous "
                                "namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
                                "{lambda()#3}::operator()() const::{lambda(float)#1}>(at::"
                                "TensorIteratorBase&, auto const&)::{lambda(int)#1}>(int, auto)",
                                50),
            "elementwise_kernel<direct_copy_kernel_cuda>");
}

// Two instantiations of one kernel template shorten alike: the second is numbered
// (names from tests/data/kineto/fp32_gemm.json.gz).
TEST(KernelName, DistinctNamesForKernelsThatShortenAlike) {
  const std::vector<std::string> names = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
      "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
      "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, "
      "std::array<char*, 3ul>)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
      "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
      "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, "
      "std::array<char*, 2ul>)",
      "ampere_sgemm_128x64_tn"};
  const auto shown = distinct_kernel_names(names, 72);
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0], "at::native::vectorized_elementwise_kernel<MulFunctor>");
  EXPECT_EQ(shown[1], "at::native::vectorized_elementwise_kernel<MulFunctor> #2");
  EXPECT_EQ(shown[2], "ampere_sgemm_128x64_tn");
}

}  // namespace
}  // namespace chokepoint::report
