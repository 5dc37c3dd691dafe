// Kernel launch costs: the host API per launch, a CUDA graph's cost per kernel node on
// the GPU, and the launch + cudaDeviceSynchronize round trip (docs/FORMATS.md "H200 figures" measured
// 4.8-5.1 us, 0.50 us and 10.3 us on the H200 VM).
#include <chrono>
#include <string>

#include "bench/cuda/check.h"
#include "bench/cuda/resources.h"
#include "bench/cuda/testcase.h"
#include "bench/cuda/timing.h"
#include "machine/bench_keys.h"

namespace chokepoint::bench::gpu {

namespace bench_keys = machine::bench_keys;
namespace {

__global__ void empty_kernel() {}

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Host time per <<<>>> launch of an empty kernel, back to back. The GPU runs empty
// kernels faster than the host issues them, so the queue never fills and the host cost
// is what is timed.
class LaunchLatency : public Testcase {
 public:
  std::string key() const override { return bench_keys::kLaunchLatency; }
  std::string description() const override { return "host time per kernel launch (empty kernel, back to back)"; }
  std::string unit() const override { return "us"; }

  Outcome run(Context& ctx) override {
    const int n = static_cast<int>(pick(ctx, 20000, 5000));
    auto measure = [&] {
      CP_CUDA(cudaStreamSynchronize(ctx.stream));
      const auto t0 = Clock::now();
      for (int i = 0; i < n; ++i) empty_kernel<<<1, 1, 0, ctx.stream>>>();
      const double us = us_since(t0);
      CP_CUDA_LAUNCH();
      CP_CUDA(cudaStreamSynchronize(ctx.stream));
      return us / n;
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    o.note = std::to_string(n) + " launches per run, host clock, " + std::to_string(ctx.runs) + " runs";
    return o;
  }
};

// GPU time of a captured graph of n empty-kernel nodes, divided by n.
class GraphNodeLatency : public Testcase {
 public:
  std::string key() const override { return bench_keys::kGraphNodeLatency; }
  std::string description() const override { return "GPU time per kernel node of a CUDA graph (empty kernels)"; }
  std::string unit() const override { return "us"; }

  Outcome run(Context& ctx) override {
    const int n = static_cast<int>(pick(ctx, 2000, 1000));
    preload_kernel(empty_kernel);
    Stream capture;  // capture on a stream of our own: ctx.stream stays usable
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    struct Cleanup {
      cudaGraph_t* g;
      cudaGraphExec_t* e;
      ~Cleanup() {
        if (*e != nullptr) cudaGraphExecDestroy(*e);
        if (*g != nullptr) cudaGraphDestroy(*g);
      }
    } cleanup{&graph, &exec};
    CP_CUDA(cudaStreamBeginCapture(capture.get(), cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < n; ++i) empty_kernel<<<1, 1, 0, capture.get()>>>();
    const cudaError_t launch_err = cudaGetLastError();
    CP_CUDA(cudaStreamEndCapture(capture.get(), &graph));
    CP_CUDA(launch_err);
    CP_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    CP_CUDA(cudaGraphUpload(exec, ctx.stream));
    auto measure = [&] {
      const double ms = time_batch_ms(ctx, [&](cudaStream_t s) { CP_CUDA(cudaGraphLaunch(exec, s)); });
      return ms * 1000.0 / n;
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    o.note = "graph of " + std::to_string(n) + " kernel nodes, cudaEvent timing, " + std::to_string(ctx.runs) + " runs";
    return o;
  }
};

// One launch followed by cudaDeviceSynchronize, repeated; the median iteration of each
// run (robust to the odd preempted iteration), then the median over runs.
class LaunchSyncRoundtrip : public Testcase {
 public:
  std::string key() const override { return bench_keys::kLaunchSyncRoundtrip; }
  std::string description() const override { return "launch + cudaDeviceSynchronize round trip (empty kernel)"; }
  std::string unit() const override { return "us"; }

  Outcome run(Context& ctx) override {
    const int n = static_cast<int>(pick(ctx, 2000, 500));
    std::vector<double> each(n);
    auto measure = [&] {
      CP_CUDA(cudaDeviceSynchronize());
      for (int i = 0; i < n; ++i) {
        const auto t0 = Clock::now();
        empty_kernel<<<1, 1, 0, ctx.stream>>>();
        CP_CUDA(cudaDeviceSynchronize());
        each[i] = us_since(t0);
      }
      CP_CUDA_LAUNCH();
      return median(each);
    };
    Outcome o;
    o.samples = repeat_runs(ctx, measure);
    o.note = std::to_string(n) + " round trips per run (median of them), host clock, " + std::to_string(ctx.runs) +
             " runs";
    return o;
  }
};

}  // namespace

std::unique_ptr<Testcase> make_launch_latency() { return std::make_unique<LaunchLatency>(); }
std::unique_ptr<Testcase> make_graph_node_latency() { return std::make_unique<GraphNodeLatency>(); }
std::unique_ptr<Testcase> make_launch_sync_roundtrip() { return std::make_unique<LaunchSyncRoundtrip>(); }

}  // namespace chokepoint::bench::gpu
