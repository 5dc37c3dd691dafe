// A CUDA program of known content for the tracer's GPU test (gpu_check.sh): N kernel
// launches, M pageable host->device copies, K stream synchronizations, and R NVTX ranges
// named "step" (each around N/R of the launches), nothing else.
// Usage: known_counts N M K [R]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void scale(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 1.0001f;
}

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e = (call);                                                      \
    if (e != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));            \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: known_counts N M K [R]\n");
    return 2;
  }
  const int ranges = argc == 5 ? std::atoi(argv[4]) : 0;
  const int kernels = std::atoi(argv[1]), copies = std::atoi(argv[2]), syncs = std::atoi(argv[3]);
  const int n = 1 << 20;
  std::vector<float> host(n, 1.0f);  // pageable
  float* dev = nullptr;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaMalloc(&dev, n * sizeof(float)));
  for (int i = 0; i < copies; ++i) CHECK(cudaMemcpyAsync(dev, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  const int per_range = ranges > 0 ? kernels / ranges : 0;
  for (int i = 0; i < kernels; ++i) {
    if (per_range > 0 && i % per_range == 0 && i / per_range < ranges) nvtxRangePushA("step");
    scale<<<(n + 255) / 256, 256, 0, stream>>>(dev, n);
    if (per_range > 0 && i % per_range == per_range - 1 && i / per_range < ranges) nvtxRangePop();
  }
  CHECK(cudaGetLastError());
  for (int i = 0; i < syncs; ++i) CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaFree(dev));
  CHECK(cudaStreamDestroy(stream));
  std::printf("known_counts: %d kernels, %d pageable HtoD copies, %d stream syncs, %d NVTX ranges\n", kernels,
              copies, syncs, ranges);
  return 0;
}
