// A program that takes CUPTI itself before CUDA initializes (as a profiler in the process
// would): under `chokepoint run --trace` the tracer must then say, in one line, that
// another CUPTI client holds the process, write a status-only trace file, and let the
// run go on. Usage: cupti_first
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdio>

__global__ void touch(float* x) { x[threadIdx.x] += 1.0f; }

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

int main() {
  CUpti_SubscriberHandle h = nullptr;
  const CUptiResult r = cuptiSubscribe(&h, on_callback, nullptr);
  std::printf("cupti_first: own cuptiSubscribe -> %d\n", static_cast<int>(r));
  float* x = nullptr;
  if (cudaMalloc(&x, 256 * sizeof(float)) != cudaSuccess) return 1;
  for (int i = 0; i < 10; ++i) touch<<<1, 256>>>(x);
  cudaDeviceSynchronize();
  cudaFree(x);
  if (r == CUPTI_SUCCESS) cuptiUnsubscribe(h);
  std::printf("cupti_first: done\n");
  return 0;
}
