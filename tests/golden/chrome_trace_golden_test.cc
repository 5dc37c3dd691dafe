// Golden tests of `analyze --format chrome` on the shipped real inputs (a Kineto trace of
// PyTorch on the H200, the CUPTI tracer's file of a known program, recordings of `run`):
// the export must be valid JSON with one slice per timeline row, one arrow per launched
// GPU op and one counter value per valid sample.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "analyses/index.h"
#include "pipeline/chrome_export.h"
#include "pipeline/inputs.h"

namespace {

using namespace chokepoint;
using Json = nlohmann::json;

const std::string kData = std::string(CHOKEPOINT_TEST_DATA);

struct Export {
  pipeline::Inputs in;
  exporters::ChromeTraceStats stats;
  Json json;
  std::map<std::string, int64_t> count;  // by "ph" and by "ph/cat"
};

Export export_paths(const std::vector<std::string>& paths) {
  Export e;
  auto in = pipeline::load_inputs(paths);
  EXPECT_TRUE(in.ok()) << in.status().message();
  if (!in.ok()) return e;
  e.in = std::move(in).value();
  std::ostringstream out;
  EXPECT_TRUE(pipeline::export_chrome_trace(e.in, out, &e.stats).ok());
  e.json = Json::parse(out.str());
  for (const Json& ev : e.json.at("traceEvents")) {
    const std::string ph = ev.at("ph");
    ++e.count[ph];
    if (ev.contains("cat")) ++e.count[ph + "/" + ev.at("cat").get<std::string>()];
  }
  return e;
}

// GPU ops whose launching API call the trace holds (what the analyses link, too).
int64_t launched_ops(const timeline::Timeline& tl) {
  const analyses::TimelineIndex ix = analyses::build_index(tl);
  int64_t n = 0;
  for (int32_t row : ix.launch_row) n += row >= 0;
  return n;
}

// Valid samples of the series the export shows (per-thread series other than CPU use are
// left out).
int64_t valid_exported_samples(const samples::Recording& rec) {
  int64_t n = 0;
  for (const auto& s : rec.samples.series()) {
    if (s.entity.kind == samples::EntityKind::kThread && s.metric != samples::MetricId::kThreadCpuPct) continue;
    for (size_t i = 0; i < s.size(); ++i) n += s.valid[i] && std::isfinite(s.values[i]);
  }
  return n;
}

void expect_one_slice_per_row(const Export& e) {
  const timeline::Timeline& tl = e.in.tl;
  int64_t kernels = 0, copies = 0, sets = 0;
  for (auto k : tl.gpu_ops.kind) {
    kernels += k == timeline::GpuOpKind::kKernel;
    copies += k == timeline::GpuOpKind::kMemcpy;
    sets += k == timeline::GpuOpKind::kMemset;
  }
  EXPECT_EQ(e.count.count("X/kernel") ? e.count.at("X/kernel") : 0, kernels);
  EXPECT_EQ(e.count.count("X/gpu_memcpy") ? e.count.at("X/gpu_memcpy") : 0, copies);
  EXPECT_EQ(e.count.count("X/gpu_memset") ? e.count.at("X/gpu_memset") : 0, sets);
  const int64_t api = (e.count.count("X/cuda_runtime") ? e.count.at("X/cuda_runtime") : 0) +
                      (e.count.count("X/cuda_driver") ? e.count.at("X/cuda_driver") : 0);
  EXPECT_EQ(api, static_cast<int64_t>(tl.runtime_calls.size()));
  EXPECT_EQ(e.count.count("X/cuda_sync") ? e.count.at("X/cuda_sync") : 0,
            static_cast<int64_t>(tl.sync_events.size()));
  const int64_t steps = e.count.count("X/step") ? e.count.at("X/step") : 0;
  EXPECT_EQ(e.count.count("X") ? e.count.at("X") : 0, static_cast<int64_t>(tl.event_count()) + steps);
  EXPECT_EQ(e.stats.unplaced, 0);
  // One arrow per launched op: a tail at the call and a head at the op.
  const int64_t flows = launched_ops(tl);
  EXPECT_EQ(e.count.count("s") ? e.count.at("s") : 0, flows);
  EXPECT_EQ(e.count.count("f") ? e.count.at("f") : 0, flows);
}

TEST(ChromeTraceGolden, KinetoTrace) {
  const Export e = export_paths({kData + "/kineto/input_bound.json.gz"});
  ASSERT_GT(e.in.tl.gpu_ops.size(), 0u);
  expect_one_slice_per_row(e);
  EXPECT_GT(e.count.at("s"), 0);
  EXPECT_EQ(e.count.count("C"), 0u) << "a trace has no samples";
  // input_bound.json.gz: three ProfilerStep#N annotations.
  EXPECT_EQ(e.count.at("X/step"), 3);
  EXPECT_EQ(e.json.at("otherData").at("steps"), "ProfilerStep#N annotations");
  // The origin is the earliest event, so the first timestamps are small and exact.
  timeline::TimeNs first = INT64_MAX;
  for (auto t : e.in.tl.cpu_ranges.start) first = std::min(first, t);
  for (auto t : e.in.tl.runtime_calls.start) first = std::min(first, t);
  for (auto t : e.in.tl.gpu_ops.start) first = std::min(first, t);
  EXPECT_LE(e.json.at("otherData").at("base_time_ns").get<int64_t>(), first);
  double min_ts = 1e300;
  for (const Json& ev : e.json.at("traceEvents")) {
    if (ev.at("ph") == "X") min_ts = std::min(min_ts, ev.at("ts").get<double>());
  }
  EXPECT_EQ(min_ts, 0.0);
}

TEST(ChromeTraceGolden, CuptiTracerFile) {
  const Export e = export_paths({kData + "/tracer/known_counts.rec/trace-1012.cptrace"});
  expect_one_slice_per_row(e);
  // tests/data/tracer/known_counts.expected_counts.json: 100 kernels, 10 copies, 117 API
  // calls, 5 stream syncs; every kernel and copy came from a call in the trace.
  EXPECT_EQ(e.count.at("X/kernel"), 100);
  EXPECT_EQ(e.count.at("X/gpu_memcpy"), 10);
  EXPECT_EQ(e.count.at("X/cuda_runtime"), 117);
  EXPECT_EQ(e.count.at("X/cuda_sync"), 5);
  EXPECT_EQ(e.count.at("s"), 110);
  EXPECT_EQ(e.count.count("C"), 0u);
}

TEST(ChromeTraceGolden, TracedRecordingHasEventsAndCounters) {
  const Export e = export_paths({kData + "/tracer/known_counts.rec"});
  ASSERT_TRUE(e.in.recording.has_value());
  expect_one_slice_per_row(e);
  EXPECT_EQ(e.count.at("X/kernel"), 100);
  EXPECT_EQ(e.count.at("C"), valid_exported_samples(*e.in.recording));
  EXPECT_EQ(e.stats.invalid_samples, 0);
  // One H200 in both the trace and NVML: its counters join the traced GPU's process.
  std::set<int64_t> gpu_counter_pids;
  std::map<int64_t, std::string> process_names;
  for (const Json& ev : e.json.at("traceEvents")) {
    if (ev.at("ph") == "C" && ev.at("name").get<std::string>().rfind("gpu0 ", 0) == 0) {
      gpu_counter_pids.insert(ev.at("pid").get<int64_t>());
    }
    if (ev.at("ph") == "M" && ev.at("name") == "process_name") process_names[ev.at("pid")] = ev.at("args").at("name");
  }
  EXPECT_EQ(gpu_counter_pids, std::set<int64_t>{exporters::kChromeGpuPidBase});
  EXPECT_EQ(process_names[exporters::kChromeGpuPidBase], "GPU 0 (NVIDIA H200)");
  EXPECT_EQ(process_names[1012], "known_counts (launched)");
  EXPECT_EQ(process_names[exporters::kChromeHostPid], "Host (vm)");
}

TEST(ChromeTraceGolden, RecordingWithoutTraceIsCountersOnly) {
  // Two GPUs under torchrun: the launcher, two ranks, their threads.
  const Export e = export_paths({kData + "/live/ddp_2gpu"});
  ASSERT_TRUE(e.in.recording.has_value());
  EXPECT_EQ(e.count.count("X"), 0u);
  EXPECT_EQ(e.count.at("C"), valid_exported_samples(*e.in.recording));
  EXPECT_GT(e.count.at("C"), 1000);
  std::set<std::string> gpu_tracks;
  std::map<int64_t, std::string> process_names;
  for (const Json& ev : e.json.at("traceEvents")) {
    if (ev.at("ph") == "C") {
      EXPECT_TRUE(ev.at("args").begin()->is_number()) << ev;
      if (ev.at("pid").get<int64_t>() >= exporters::kChromeSampledGpuPidBase) gpu_tracks.insert(ev.at("name"));
    }
    if (ev.at("ph") == "M" && ev.at("name") == "process_name") process_names[ev.at("pid")] = ev.at("args").at("name");
  }
  EXPECT_TRUE(gpu_tracks.count("gpu0 sm_active") && gpu_tracks.count("gpu1 sm_active"));
  EXPECT_EQ(process_names[exporters::kChromeSampledGpuPidBase + 1], "GPU 1 (NVIDIA H200)");
  int ranks = 0;
  for (const auto& [pid, name] : process_names) ranks += name.find(", rank ") != std::string::npos;
  EXPECT_EQ(ranks, 2) << "the two torchrun ranks are named with their RANK";
}

}  // namespace
