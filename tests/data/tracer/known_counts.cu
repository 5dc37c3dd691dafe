// A CUDA program of known content for the tracer's GPU test (gpu_check.sh): N kernel
// launches, M pageable host->device copies, K stream synchronizations, nothing else.
// Usage: known_counts N M K
#include <cuda_runtime.h>

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
  if (argc != 4) {
    std::fprintf(stderr, "usage: known_counts N M K\n");
    return 2;
  }
  const int kernels = std::atoi(argv[1]), copies = std::atoi(argv[2]), syncs = std::atoi(argv[3]);
  const int n = 1 << 20;
  std::vector<float> host(n, 1.0f);  // pageable
  float* dev = nullptr;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaMalloc(&dev, n * sizeof(float)));
  for (int i = 0; i < copies; ++i) CHECK(cudaMemcpyAsync(dev, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  for (int i = 0; i < kernels; ++i) scale<<<(n + 255) / 256, 256, 0, stream>>>(dev, n);
  CHECK(cudaGetLastError());
  for (int i = 0; i < syncs; ++i) CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaFree(dev));
  CHECK(cudaStreamDestroy(stream));
  std::printf("known_counts: %d kernels, %d pageable HtoD copies, %d stream syncs\n", kernels, copies, syncs);
  return 0;
}
