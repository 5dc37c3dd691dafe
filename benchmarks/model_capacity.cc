// How many events the timeline model holds, and what analyzing them costs: fills a
// Timeline with N synthetic events in the proportions of a real training trace (per
// kernel: one launch API call and two ATen op ranges, ProfilerStep every 1000 kernels),
// then finalizes, analyzes and diagnoses it, printing bytes per event, peak RSS and times.
//
//   build-bench/benchmarks/model_capacity 100000000      # 10^8 events
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyses/analysis.h"
#include "rules/diagnose.h"
#include "timeline/model.h"

using namespace chokepoint;
using timeline::TimeNs;

namespace {

double peak_rss_gib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is KiB
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t events = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
  const int64_t kernels = events / 4;  // kernel + launch + 2 ops = 4 events
  timeline::Timeline tl;
  tl.sources.push_back({"synthetic", "synthetic"});
  timeline::Device dev;
  dev.name = "NVIDIA H200";
  dev.num_sms = 132;
  dev.cc_major = 9;
  dev.local_id = 0;
  tl.devices.push_back(dev);
  const auto names = std::array{tl.strings.intern("void at::native::vectorized_elementwise_kernel<4>"),
                                tl.strings.intern("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"),
                                tl.strings.intern("void at::native::reduce_kernel<512, 1>")};
  const auto launch = tl.strings.intern("cudaLaunchKernel");
  const auto op = tl.strings.intern("aten::add"), outer = tl.strings.intern("aten::linear");

  auto t0 = std::chrono::steady_clock::now();
  auto& g = tl.gpu_ops;
  auto& rc = tl.runtime_calls;
  auto& cpu = tl.cpu_ranges;
  auto add_cpu = [&](timeline::StringId name, TimeNs s, TimeNs e, int64_t ext, timeline::CpuCategory c) {
    cpu.pid.push_back(1);
    cpu.tid.push_back(1);
    cpu.category.push_back(c);
    cpu.name.push_back(name);
    cpu.start.push_back(s);
    cpu.end.push_back(e);
    cpu.external_id.push_back(ext);
    cpu.sequence.push_back(-1);
    cpu.inputs.push_back(timeline::CpuRanges::kNoInputs);
  };
  const int64_t kPerStep = 1000;
  for (int64_t k = 0; k < kernels; ++k) {
    const TimeNs t = k * 10'000;  // a kernel every 10 us: 8 us of work, 2 us gap
    if (k % kPerStep == 0) {
      const int64_t n = k / kPerStep;
      add_cpu(tl.strings.intern("ProfilerStep#" + std::to_string(n)), t, t + kPerStep * 10'000, -1,
              timeline::CpuCategory::kUserAnnotation);
      auto& st = tl.steps;
      st.number.push_back(n);
      st.source_index.push_back(0);
      st.pid.push_back(1);
      st.tid.push_back(1);
      st.start.push_back(t);
      st.end.push_back(t + kPerStep * 10'000);
      st.how.push_back(timeline::StepSource::kProfilerStep);
    }
    add_cpu(outer, t, t + 6'000, -1, timeline::CpuCategory::kOp);
    add_cpu(op, t + 500, t + 5'500, k, timeline::CpuCategory::kOp);
    rc.pid.push_back(1);
    rc.tid.push_back(1);
    rc.api.push_back(timeline::ApiKind::kRuntime);
    rc.name.push_back(launch);
    rc.start.push_back(t + 1'000);
    rc.end.push_back(t + 5'000);
    rc.correlation.push_back(k);
    rc.external_id.push_back(k);
    rc.cbid.push_back(211);
    g.kind.push_back(timeline::GpuOpKind::kKernel);
    g.device.push_back(0);
    g.stream.push_back(7);
    g.start.push_back(t + 2'000);
    g.end.push_back(t + 10'000);
    g.name.push_back(names[k % 3]);
    g.correlation.push_back(k);
    g.external_id.push_back(k);
    g.grid.push_back({1024, 1, 1});
    g.block.push_back({256, 1, 1});
    g.registers.push_back(32);
    g.shared_mem.push_back(0);
    g.occupancy_pct.push_back(50.f);
    g.bytes.push_back(0);
    g.copy_kind.push_back(timeline::CopyKind::kUnknown);
    g.src_kind.push_back(timeline::MemKind::kUnknown);
    g.dst_kind.push_back(timeline::MemKind::kUnknown);
  }
  tl.finalize();
  const double fill_s = seconds_since(t0);
  const double model_gib = static_cast<double>(tl.memory_bytes()) / (1024.0 * 1024.0 * 1024.0);
  std::printf("events %lld: model %.2f GiB (%.1f bytes/event), filled in %.1f s, peak RSS %.2f GiB\n",
              static_cast<long long>(tl.event_count()), model_gib,
              static_cast<double>(tl.memory_bytes()) / static_cast<double>(tl.event_count()), fill_s, peak_rss_gib());
  std::fflush(stdout);

  t0 = std::chrono::steady_clock::now();
  const analyses::Analysis a = analyses::analyze(tl);
  const rules::Diagnosis d = rules::diagnose(tl, a);
  std::printf("analyzed %lld steps in %.1f s: verdict %s, %zu findings; peak RSS %.2f GiB\n",
              static_cast<long long>(a.steps()), seconds_since(t0), rules::category_name(d.bound), d.findings.size(),
              peak_rss_gib());
  return 0;
}
