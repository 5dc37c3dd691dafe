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

  // Events counted under `key`, 0 for none.
  int64_t n(const std::string& key) const {
    auto it = count.find(key);
    return it != count.end() ? it->second : 0;
  }
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

// One slice per GPU op of each kind.
void expect_one_slice_per_gpu_op(const Export& e) {
  int64_t kernels = 0, copies = 0, sets = 0;
  for (auto k : e.in.tl.gpu_ops.kind) {
    kernels += k == timeline::GpuOpKind::kKernel;
    copies += k == timeline::GpuOpKind::kMemcpy;
    sets += k == timeline::GpuOpKind::kMemset;
  }
  EXPECT_EQ(e.n("X/kernel"), kernels);
  EXPECT_EQ(e.n("X/gpu_memcpy"), copies);
  EXPECT_EQ(e.n("X/gpu_memset"), sets);
}

void expect_one_slice_per_row(const Export& e) {
  const timeline::Timeline& tl = e.in.tl;
  expect_one_slice_per_gpu_op(e);
  EXPECT_EQ(e.n("X/cuda_runtime") + e.n("X/cuda_driver"), static_cast<int64_t>(tl.runtime_calls.size()));
  EXPECT_EQ(e.n("X/cuda_sync"), static_cast<int64_t>(tl.sync_events.size()));
  // Besides the rows: the step windows and the GPU's idle gaps (the findings' tracks).
  EXPECT_EQ(e.n("X"), static_cast<int64_t>(tl.event_count()) + e.n("X/step") + e.n("X/idle"));
  EXPECT_EQ(e.n("X/idle"), e.stats.idle_gaps);
  EXPECT_EQ(e.n("i"), e.stats.markers);
  EXPECT_EQ(e.stats.unplaced, 0);
  // One arrow per launched op: a tail at the call and a head at the op.
  const int64_t flows = launched_ops(tl);
  EXPECT_EQ(e.n("s"), flows);
  EXPECT_EQ(e.n("f"), flows);
}

// The name of each process the export declares (its "process_name" metadata events).
std::map<int64_t, std::string> process_names(const Json& json) {
  std::map<int64_t, std::string> names;
  for (const Json& ev : json.at("traceEvents")) {
    if (ev.at("ph") == "M" && ev.at("name") == "process_name") names[ev.at("pid")] = ev.at("args").at("name");
  }
  return names;
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

// Issue 15: the export points at the findings. input_bound (a DataLoader with too few
// workers) has its GPU idle gaps on an "idle by cause" track, the input ones adding up to
// the input idle time of the report, and an input-pipeline-stall marker per step at that
// step's longest input gap.
TEST(ChromeTraceGolden, IdleTrackAndFindingMarkers) {
  const Export e = export_paths({kData + "/kineto/input_bound.json.gz"});
  ASSERT_GT(e.n("X/idle"), 0);
  double input_us = 0, idle_us = 0;
  std::set<double> input_gap_starts;
  int64_t idle_track_tid = -1;
  for (const Json& ev : e.json.at("traceEvents")) {
    if (ev.at("ph") != "X" || ev.value("cat", "") != "idle") continue;
    idle_us += ev.at("dur").get<double>();
    idle_track_tid = ev.at("tid");
    if (ev.at("name") == "input") {
      input_us += ev.at("dur").get<double>();
      input_gap_starts.insert(ev.at("ts").get<double>());
    }
  }
  EXPECT_EQ(idle_track_tid, exporters::kChromeIdleTid);
  // analyze's report of this trace: GPU idle 93.9% of 3 steps of 33.06 ms, input 29.79 ms
  // per step (each gap is named by its largest cause, so the input gaps hold a little more).
  EXPECT_NEAR(idle_us / 1e3 / 3, 0.939 * 33.06, 0.5);
  EXPECT_NEAR(input_us / 1e3 / 3, 29.79, 0.5);
  int64_t stall_markers = 0;
  for (const Json& ev : e.json.at("traceEvents")) {
    if (ev.at("ph") != "i") continue;
    EXPECT_EQ(ev.at("tid"), exporters::kChromeFindingsTid);
    EXPECT_EQ(ev.at("s"), "t");
    if (ev.at("name") != "input-pipeline-stall") continue;
    ++stall_markers;
    EXPECT_EQ(ev.at("args").at("severity"), "critical");
    EXPECT_EQ(input_gap_starts.count(ev.at("ts").get<double>()), 1u) << ev.dump();
  }
  EXPECT_EQ(stall_markers, 3);
  bool named = false;
  for (const Json& ev : e.json.at("traceEvents")) {
    named = named ||
            (ev.at("ph") == "M" && ev.at("name") == "thread_name" && ev.at("tid") == exporters::kChromeIdleTid &&
             ev.at("args").at("name") == "idle by cause (chokepoint)");
  }
  EXPECT_TRUE(named);
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

// The processes GPU 0's counters are shown in.
std::set<int64_t> gpu0_counter_pids(const Json& json) {
  std::set<int64_t> pids;
  for (const Json& ev : json.at("traceEvents")) {
    if (ev.at("ph") == "C" && ev.at("name").get<std::string>().rfind("gpu0 ", 0) == 0) {
      pids.insert(ev.at("pid").get<int64_t>());
    }
  }
  return pids;
}

TEST(ChromeTraceGolden, TracedRecordingHasEventsAndCounters) {
  const Export e = export_paths({kData + "/tracer/known_counts.rec"});
  ASSERT_TRUE(e.in.recording.has_value());
  expect_one_slice_per_row(e);
  EXPECT_EQ(e.count.at("X/kernel"), 100);
  EXPECT_EQ(e.count.at("C"), valid_exported_samples(*e.in.recording));
  EXPECT_EQ(e.stats.invalid_samples, 0);
  // One H200 in both the trace and NVML: its counters join the traced GPU's process.
  EXPECT_EQ(gpu0_counter_pids(e.json), std::set<int64_t>{exporters::kChromeGpuPidBase});
  std::map<int64_t, std::string> names = process_names(e.json);
  EXPECT_EQ(names[exporters::kChromeGpuPidBase], "GPU 0 (NVIDIA H200)");
  EXPECT_EQ(names[1012], "known_counts (launched)");
  EXPECT_EQ(names[exporters::kChromeHostPid], "Host (vm)");
}

// The names of the sampled GPUs' counter tracks; every counter's value is a number.
std::set<std::string> sampled_gpu_tracks(const Json& json) {
  std::set<std::string> tracks;
  for (const Json& ev : json.at("traceEvents")) {
    if (ev.at("ph") != "C") continue;
    EXPECT_TRUE(ev.at("args").begin()->is_number()) << ev;
    if (ev.at("pid").get<int64_t>() >= exporters::kChromeSampledGpuPidBase) tracks.insert(ev.at("name"));
  }
  return tracks;
}

TEST(ChromeTraceGolden, RecordingWithoutTraceIsCountersOnly) {
  // Two GPUs under torchrun: the launcher, two ranks, their threads.
  const Export e = export_paths({kData + "/live/ddp_2gpu"});
  ASSERT_TRUE(e.in.recording.has_value());
  EXPECT_EQ(e.count.count("X"), 0u);
  EXPECT_EQ(e.count.at("C"), valid_exported_samples(*e.in.recording));
  EXPECT_GT(e.count.at("C"), 1000);
  const std::set<std::string> gpu_tracks = sampled_gpu_tracks(e.json);
  EXPECT_TRUE(gpu_tracks.count("gpu0 sm_active") && gpu_tracks.count("gpu1 sm_active"));
  std::map<int64_t, std::string> names = process_names(e.json);
  EXPECT_EQ(names[exporters::kChromeSampledGpuPidBase + 1], "GPU 1 (NVIDIA H200)");
  int ranks = 0;
  for (const auto& [pid, name] : names) ranks += name.find(", rank ") != std::string::npos;
  EXPECT_EQ(ranks, 2) << "the two torchrun ranks are named with their RANK";
}

}  // namespace
