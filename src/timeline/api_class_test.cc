#include "timeline/api_class.h"

#include <gtest/gtest.h>

namespace chokepoint::timeline {
namespace {

TEST(ApiClass, NamesFromRealTraces) {
  EXPECT_EQ(classify_api("cudaLaunchKernel"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cuLaunchKernelEx"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cudaLaunchKernelExC_v11060"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cudaGraphLaunch"), ApiClass::kGraphLaunch);
  EXPECT_EQ(classify_api("cudaStreamSynchronize"), ApiClass::kSync);
  EXPECT_EQ(classify_api("cudaDeviceSynchronize"), ApiClass::kSync);
  EXPECT_EQ(classify_api("cudaMemcpy"), ApiClass::kSync);
  EXPECT_EQ(classify_api("cudaMemcpyAsync"), ApiClass::kMemcpyAsync);
  EXPECT_EQ(classify_api("cudaMemsetAsync"), ApiClass::kMemset);
  EXPECT_EQ(classify_api("cudaMalloc"), ApiClass::kAlloc);
  EXPECT_EQ(classify_api("cudaFree"), ApiClass::kFree);
  EXPECT_EQ(classify_api("cudaMallocAsync"), ApiClass::kOther);
  EXPECT_EQ(classify_api("cudaEventQuery"), ApiClass::kOther);
  EXPECT_EQ(classify_api("cudaStreamIsCapturing"), ApiClass::kOther);
}

}  // namespace
}  // namespace chokepoint::timeline
