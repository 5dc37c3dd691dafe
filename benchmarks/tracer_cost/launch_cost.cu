// What tracing costs per kernel launch, measured without Python's noise: issue 14 part 3
// and docs/BENCHMARKS.md "Tracer cost per launch". One process per mode:
//
//   launch_cost none                 no CUPTI in the process
//   launch_cost floor                CUPTI's own floor: CONCURRENT_KERNEL records into
//                                    buffers that are freed unread (the least a tracer
//                                    that keeps every kernel can do)
//   launch_cost floor-walk           the floor, each record walked (cuptiActivityGetNextRecord)
//   launch_cost floor-launch-api     the floor plus the runtime API record of the launch call
//   launch_cost traced               nothing of its own: run under CUDA_INJECTION64_PATH
//                                    (chokepoint's tracer), which does the collecting
//
// Each round launches BATCH empty kernels and synchronizes; it reports the host time to
// enqueue the batch (below the launch queue's depth, so the host's own cost per launch)
// and the time until the batch has run (the GPU side of the trace: CUPTI's timestamps).
// Prints one line: mode, enqueue ns/launch and end-to-end ns/launch (medians of ROUNDS).
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void empty_kernel() {}

namespace {
bool g_walk = false;
size_t g_records = 0;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (g_walk) {
    CUpti_Activity* a = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS) ++g_records;
  }
  std::free(buffer);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "none";
  const int batch = argc > 2 ? std::atoi(argv[2]) : 400;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 400;
  const bool floor = std::strncmp(mode, "floor", 5) == 0;
  if (floor) {
    g_walk = std::strcmp(mode, "floor-walk") == 0;
    cuptiActivityRegisterCallbacks(requested, completed);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (std::strcmp(mode, "floor-launch-api") == 0) {
      cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1);
    }
  }
  cudaFree(nullptr);
  for (int i = 0; i < 2000; ++i) empty_kernel<<<1, 32>>>();  // warm-up
  cudaDeviceSynchronize();
  std::vector<double> enqueue, total;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) empty_kernel<<<1, 32>>>();
    const auto t1 = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    const auto t2 = std::chrono::steady_clock::now();
    enqueue.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
    total.push_back(std::chrono::duration<double, std::nano>(t2 - t0).count() / batch);
  }
  if (floor) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::printf("%s enqueue_ns %.0f total_ns %.0f\n", mode, median(enqueue), median(total));
  if (cudaGetLastError() != cudaSuccess) return 1;
  return 0;
}
