#include "exporters/chrome_trace.h"

#include <cmath>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analyses/testing/recording_builder.h"
#include "analyses/testing/timeline_builder.h"

namespace chokepoint::exporters {
namespace {

using Json = nlohmann::json;
using samples::Entity;
using samples::MetricId;
using testing::TimelineBuilder;
using timeline::TimeNs;

// Real traces count from the Unix epoch; the builder from 0.
constexpr TimeNs kEpoch = 1'795'974'960'599'569'115;

void shift(std::vector<TimeNs>& v, TimeNs by) {
  for (TimeNs& t : v) t += by;
}

timeline::Timeline& to_epoch(timeline::Timeline& tl) {
  for (auto* v : {&tl.gpu_ops.start, &tl.gpu_ops.end, &tl.cpu_ranges.start, &tl.cpu_ranges.end, &tl.runtime_calls.start,
                  &tl.runtime_calls.end, &tl.sync_events.start, &tl.sync_events.end, &tl.gpu_annotations.start,
                  &tl.gpu_annotations.end, &tl.steps.start, &tl.steps.end}) {
    shift(*v, kEpoch);
  }
  return tl;
}

struct Written {
  std::string text;
  Json json;
  ChromeTraceStats stats;

  std::vector<Json> events(const std::string& ph, const std::string& cat = "") const {
    std::vector<Json> out;
    for (const Json& e : json.at("traceEvents")) {
      if (e.at("ph") == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
    }
    return out;
  }
  const Json* named(const std::string& ph, const std::string& name) const {
    for (const Json& e : json.at("traceEvents")) {
      if (e.at("ph") == ph && e.at("name") == name) return &e;
    }
    return nullptr;
  }
  // The name a process_name / thread_name event gives (pid, tid), "" when none.
  std::string meta_name(int64_t pid, int64_t tid = -1) const {
    for (const Json& e : events("M")) {
      if (e.at("pid") != pid) continue;
      if (tid < 0 && e.at("name") == "process_name") return e.at("args").at("name");
      if (tid >= 0 && e.at("name") == "thread_name" && e.at("tid") == tid) return e.at("args").at("name");
    }
    return "";
  }
};

Written write(const timeline::Timeline& tl, const samples::Recording* rec = nullptr,
              const analyses::StepWindows* steps = nullptr) {
  std::ostringstream out;
  Written w;
  EXPECT_TRUE(write_chrome_trace(tl, rec, steps, out, &w.stats).ok());
  w.text = out.str();
  w.json = Json::parse(w.text);  // throws, failing the test, on invalid JSON
  return w;
}

// A training step in miniature: an ATen op with shapes launching a kernel, a pageable
// copy, an API call that launches nothing, a stream sync, an annotation on the GPU.
timeline::Timeline& small_step(TimelineBuilder& b) {
  b.step(1, 0, 100);
  b.op_with_inputs("aten::mm", 5, 20, 7, {{"float", {64, 128}}, {"float", {128, 32}}});
  b.kernel("ampere_sgemm_64x32_nn", 10, 30, 25, 132, "cudaLaunchKernel", 3, 7);
  b.memcpy(timeline::CopyKind::kHtoD, timeline::MemKind::kPageable, timeline::MemKind::kDevice, 1 << 20, 40, 60, 12);
  b.runtime("cudaGetDevice", 50, 1);
  b.runtime("cudaStreamSynchronize", 75, 20, 99);
  timeline::Timeline& tl = b.finish();
  auto& s = tl.sync_events;
  s.pid.push_back(TimelineBuilder::kPid);
  s.tid.push_back(TimelineBuilder::kTid);
  s.device.push_back(0);
  s.stream.push_back(7);
  s.kind.push_back(timeline::SyncKind::kStreamSync);
  s.start.push_back(TimelineBuilder::us(76));
  s.end.push_back(TimelineBuilder::us(94));
  s.correlation.push_back(99);
  auto& a = tl.gpu_annotations;
  a.device.push_back(0);
  a.stream.push_back(7);
  a.name.push_back(tl.strings.intern("forward"));
  a.start.push_back(TimelineBuilder::us(30));
  a.end.push_back(TimelineBuilder::us(55));
  tl.thread_names.push_back({TimelineBuilder::kPid, -1, "python3 train.py"});
  tl.thread_names.push_back({TimelineBuilder::kPid, TimelineBuilder::kTid, "MainThread"});
  tl.thread_names.push_back({4242, 4243, "a thread without events"});
  return to_epoch(tl);
}

TEST(ChromeTrace, OneSliceForEveryRowOnItsTrack) {
  TimelineBuilder b;
  const timeline::Timeline& tl = small_step(b);
  const Written w = write(tl);
  EXPECT_EQ(w.json.at("displayTimeUnit"), "ns");
  EXPECT_EQ(w.json.at("otherData").at("base_time_ns"), kEpoch);
  EXPECT_EQ(w.json.at("otherData").at("generator").get<std::string>().rfind("chokepoint ", 0), 0u);

  EXPECT_EQ(w.events("X", "kernel").size(), 1u);
  EXPECT_EQ(w.events("X", "gpu_memcpy").size(), 1u);
  EXPECT_EQ(w.events("X", "cuda_runtime").size(), tl.runtime_calls.size());
  EXPECT_EQ(w.events("X", "cuda_sync").size(), 1u);
  EXPECT_EQ(w.events("X", "gpu_user_annotation").size(), 1u);
  EXPECT_EQ(w.events("X", "cpu_op").size() + w.events("X", "user_annotation").size(), tl.cpu_ranges.size());
  EXPECT_EQ(w.events("X").size(), tl.event_count());
  EXPECT_EQ(w.stats.slices, static_cast<int64_t>(tl.event_count()));

  const Json k = w.events("X", "kernel").at(0);
  EXPECT_EQ(k.at("name"), "ampere_sgemm_64x32_nn");
  EXPECT_EQ(k.at("pid"), kChromeGpuPidBase);
  EXPECT_EQ(k.at("tid"), 7);
  EXPECT_EQ(k.at("args").at("grid"), Json::array({132, 1, 1}));
  EXPECT_EQ(k.at("args").at("block"), Json::array({256, 1, 1}));
  EXPECT_EQ(k.at("args").at("registers per thread"), 32);
  EXPECT_EQ(k.at("args").at("shared memory"), 0);
  EXPECT_EQ(k.at("args").at("External id"), 7);
  EXPECT_FALSE(k.at("args").contains("est. achieved occupancy %")) << "unknown stays out";

  const Json c = w.events("X", "gpu_memcpy").at(0);
  EXPECT_EQ(c.at("args").at("bytes"), 1 << 20);
  EXPECT_EQ(c.at("args").at("copy kind"), "HtoD");
  EXPECT_EQ(c.at("args").at("src kind"), "Pageable");
  EXPECT_EQ(c.at("args").at("dst kind"), "Device");

  const Json& mm = *w.named("X", "aten::mm");
  EXPECT_EQ(mm.at("pid"), TimelineBuilder::kPid);
  EXPECT_EQ(mm.at("tid"), TimelineBuilder::kTid);
  EXPECT_EQ(mm.at("args").at("Input Dims"), Json::parse("[[64,128],[128,32]]"));
  EXPECT_EQ(mm.at("args").at("Input type"), Json::parse(R"(["float","float"])"));

  const Json sync = w.events("X", "cuda_sync").at(0);
  EXPECT_EQ(sync.at("name"), "Stream Sync");
  EXPECT_EQ(sync.at("tid"), TimelineBuilder::kTid) << "on the thread that blocked";
  EXPECT_EQ(sync.at("args").at("correlation"), 99);

  EXPECT_EQ(w.meta_name(TimelineBuilder::kPid), "python3 train.py");
  EXPECT_EQ(w.meta_name(TimelineBuilder::kPid, TimelineBuilder::kTid), "MainThread");
  EXPECT_EQ(w.meta_name(kChromeGpuPidBase), "GPU 0 (NVIDIA H200)");
  EXPECT_EQ(w.meta_name(kChromeGpuPidBase, 7), "stream 7");
  EXPECT_EQ(w.meta_name(4242, 4243), "") << "no name for a track without events";
}

TEST(ChromeTrace, RelativeMicrosecondsKeepNanoseconds) {
  TimelineBuilder b;
  b.kernel("k", 0, 10, 5);
  timeline::Timeline& tl = to_epoch(b.finish());
  // Odd nanoseconds, which a double of epoch microseconds (~1.8e15) could not hold.
  tl.gpu_ops.start[0] = kEpoch + 1001;
  tl.gpu_ops.end[0] = kEpoch + 3502;
  const Written w = write(tl);
  EXPECT_EQ(w.json.at("otherData").at("base_time_ns"), kEpoch) << "the launch call is the earliest";
  EXPECT_NE(w.text.find("\"ts\":0.000,\"dur\":3.000"), std::string::npos) << w.text;
  EXPECT_NE(w.text.find("\"ts\":1.001,\"dur\":2.501"), std::string::npos) << w.text;
  const Json k = w.events("X", "kernel").at(0);
  EXPECT_NEAR(k.at("ts").get<double>(), 1.001, 1e-9);
}

TEST(ChromeTrace, EscapesEveryName) {
  TimelineBuilder b;
  const std::string nasty = std::string("void f<\"q\", a\\b>(x)\n\tend\x01 caf\xC3\xA9 \xFF");
  b.kernel(nasty, 0, 10, 5);
  b.cpu("</script><b>", 0, 1);
  const Written w = write(to_epoch(b.finish()));
  const Json k = w.events("X", "kernel").at(0);
  EXPECT_EQ(k.at("name"), std::string("void f<\"q\", a\\b>(x)\n\tend\x01 caf\xC3\xA9 \xEF\xBF\xBD"));
  EXPECT_NE(w.named("X", "</script><b>"), nullptr);
  EXPECT_NE(w.text.find(R"(\"q\", a\\b>(x)\n\tend\u0001)"), std::string::npos);
}

TEST(ChromeTrace, ArrowFromEachLaunchToItsGpuOp) {
  TimelineBuilder b;
  b.kernel("a", 0, 10, 5);
  b.kernel("b", 4, 20, 5, 1024, "cuLaunchKernel");
  b.kernel("queued before the trace", -1, 30, 5);
  // A graph launch: one call, one correlation id, two kernels.
  const int64_t graph_corr = 500;
  b.runtime("cudaGraphLaunch", 40, 2, graph_corr);
  b.graph_node("graph node", graph_corr, 50, 5, 9);
  b.graph_node("graph node", graph_corr, 60, 5, 9);
  timeline::Timeline& tl = to_epoch(b.finish());
  tl.finalize();  // shifted to the epoch: sorted again

  const Written w = write(tl);
  const auto starts = w.events("s", "ac2g");
  const auto ends = w.events("f", "ac2g");
  ASSERT_EQ(starts.size(), 4u) << "every launched op, none for the one without a call";
  ASSERT_EQ(ends.size(), 4u);
  EXPECT_EQ(w.stats.flows, 4);
  EXPECT_EQ(w.events("X", "cuda_driver").size(), 1u);

  std::map<int64_t, Json> call_of_flow, op_of_flow;
  for (const Json& s : starts) call_of_flow[s.at("id")] = s;
  for (const Json& f : ends) op_of_flow[f.at("id")] = f;
  ASSERT_EQ(call_of_flow.size(), 4u) << "ids are unique, even for the graph's two ops";
  for (const auto& [id, f] : op_of_flow) {
    ASSERT_TRUE(call_of_flow.count(id)) << id;
    const Json& s = call_of_flow[id];
    EXPECT_EQ(f.at("bp"), "e");
    EXPECT_GE(f.at("pid").get<int64_t>(), kChromeGpuPidBase);
    EXPECT_EQ(s.at("pid"), TimelineBuilder::kPid);
    // The tail sits at the start of a call on that thread, the head at the start of an op.
    bool at_call = false, at_op = false;
    for (const Json& x : w.events("X")) {
      at_call |= x.at("pid") == s.at("pid") && x.at("tid") == s.at("tid") && x.at("ts") == s.at("ts");
      at_op |= x.at("pid") == f.at("pid") && x.at("tid") == f.at("tid") && x.at("ts") == f.at("ts");
    }
    EXPECT_TRUE(at_call && at_op) << s << f;
  }
  const Json* graph = w.named("X", "cudaGraphLaunch");
  ASSERT_NE(graph, nullptr);
  int from_graph = 0;
  for (const Json& s : starts) from_graph += s.at("ts") == graph->at("ts");
  EXPECT_EQ(from_graph, 2);
}

TEST(ChromeTrace, NegativeThreadIdsKeepTheirLow32Bits) {
  TimelineBuilder b;
  b.kernel("k", 0, 10, 5);
  timeline::Timeline& tl = to_epoch(b.finish());
  tl.runtime_calls.tid[0] = -1083457536;  // pthread_self() cut to 32 bits
  const Written w = write(tl);
  const Json call = w.events("X", "cuda_runtime").at(0);
  EXPECT_EQ(call.at("tid"), 3211509760u);
  EXPECT_EQ(w.events("s").at(0).at("tid"), 3211509760u);
}

TEST(ChromeTrace, StepWindowsOnTheirOwnTrack) {
  TimelineBuilder b;
  timeline::Timeline& tl = small_step(b);
  analyses::StepWindows steps;
  steps.method = "ProfilerStep#N annotations";
  for (int n : {1, 2}) {
    analyses::StepWindow s;
    s.number = n;
    s.pid = TimelineBuilder::kPid;
    s.tid = TimelineBuilder::kTid;
    s.start = kEpoch + (n - 1) * 100'000;
    s.end = kEpoch + n * 100'000;
    steps.steps.push_back(s);
  }
  const Written w = write(tl, nullptr, &steps);
  const auto ev = w.events("X", "step");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].at("name"), "step 2");
  EXPECT_EQ(ev[1].at("pid"), kChromeStepsPid);
  EXPECT_EQ(ev[1].at("ts"), 100.0);
  EXPECT_EQ(ev[1].at("dur"), 100.0);
  EXPECT_EQ(ev[1].at("args").at("method"), "ProfilerStep#N annotations");
  EXPECT_EQ(w.meta_name(kChromeStepsPid), "Steps");
  EXPECT_EQ(w.json.at("otherData").at("steps"), "ProfilerStep#N annotations");

  steps.whole_trace = true;
  steps.steps.resize(1);
  EXPECT_TRUE(write(tl, nullptr, &steps).events("X", "step").empty()) << "one window over all says nothing";
}

// Samples: one counter track per (metric, entity), no value for an invalid sample.
samples::Recording recording(int* valid_exported) {
  testing::RecordingBuilder b(10);
  b.gpu(0);
  b.process(testing::RecordingBuilder::kLaunchedPid, samples::ProcessRole::kLaunched);
  b.host_fact("hostname", "node7");
  const double nan = std::nan("");
  b.series(MetricId::kGpuSmActive, Entity::gpu(0), [&](int i) { return i % 3 == 0 ? nan : 10.0 * i; });
  b.constant(MetricId::kHostCpuUserPct, Entity::host(), 25);
  b.series(MetricId::kProcCpuPct, Entity::process(testing::RecordingBuilder::kLaunchedPid),
           [&](int i) { return i < 2 ? nan : 99.5; });
  b.constant(MetricId::kThreadCpuPct, Entity::thread(testing::RecordingBuilder::kLaunchedPid, 1001), 80);
  b.constant(MetricId::kThreadState, Entity::thread(testing::RecordingBuilder::kLaunchedPid, 1001), 'R');
  *valid_exported = (10 - 4) + 10 + (10 - 2) + 10;  // thread.state is not exported
  return b.rec();
}

TEST(ChromeTrace, CountersSkipInvalidSamples) {
  int valid = 0;
  const samples::Recording rec = recording(&valid);
  const timeline::Timeline empty;
  const Written w = write(empty, &rec);
  EXPECT_EQ(w.events("C").size(), static_cast<size_t>(valid));
  EXPECT_EQ(w.stats.counters, valid);
  EXPECT_EQ(w.stats.invalid_samples, 4 + 2);
  EXPECT_EQ(w.json.at("otherData").at("base_time_ns"), testing::RecordingBuilder::kT0);
  EXPECT_TRUE(w.events("X").empty());

  std::map<std::string, std::vector<Json>> tracks;
  for (const Json& c : w.events("C")) tracks[c.at("name")].push_back(c);
  ASSERT_EQ(tracks.size(), 4u);
  const auto& sm = tracks.at("gpu0 sm_active");
  ASSERT_EQ(sm.size(), 6u);
  // Ticks 1, 2, 4 ...: 0 and 3 were invalid and are absent, not zero.
  EXPECT_EQ(sm[0].at("args"), Json::parse(R"({"%":10.0})"));
  EXPECT_EQ(sm[0].at("ts"), 100000.0);
  EXPECT_EQ(sm[2].at("args").at("%"), 40.0);
  EXPECT_EQ(sm[0].at("pid"), kChromeSampledGpuPidBase);
  EXPECT_EQ(tracks.at("host cpu_user_pct")[0].at("pid"), kChromeHostPid);
  EXPECT_EQ(tracks.at("proc cpu_pct")[0].at("pid"), testing::RecordingBuilder::kLaunchedPid);
  EXPECT_EQ(tracks.at("thread 1001 cpu_pct")[0].at("pid"), testing::RecordingBuilder::kLaunchedPid);

  EXPECT_EQ(w.meta_name(kChromeSampledGpuPidBase), "GPU 0 (NVIDIA H200)");
  EXPECT_EQ(w.meta_name(kChromeHostPid), "Host (node7)");
  EXPECT_EQ(w.meta_name(testing::RecordingBuilder::kLaunchedPid), "python3 (launched)");
}

TEST(ChromeTrace, SampledGpuJoinsTheTracedDeviceOfTheSameIdAndName) {
  int valid = 0;
  samples::Recording rec = recording(&valid);
  TimelineBuilder b;
  b.kernel("k", 0, 10, 5);
  timeline::Timeline& tl = to_epoch(b.finish());
  {
    const Written w = write(tl, &rec);
    EXPECT_EQ(w.named("C", "gpu0 sm_active")->at("pid"), kChromeGpuPidBase);
    EXPECT_EQ(w.meta_name(kChromeSampledGpuPidBase), "");
  }
  // Another GPU model under the same index: the trace's device 0 is not NVML's GPU 0.
  rec.meta.gpus[0].name = "NVIDIA A100-SXM4-80GB";
  const Written w = write(tl, &rec);
  EXPECT_EQ(w.named("C", "gpu0 sm_active")->at("pid"), kChromeSampledGpuPidBase);
  EXPECT_EQ(w.meta_name(kChromeSampledGpuPidBase), "GPU 0 (NVIDIA A100-SXM4-80GB) samples");
  EXPECT_EQ(w.json.at("otherData").at("base_time_ns"), testing::RecordingBuilder::kT0) << "the samples start first";
}

TEST(ChromeTrace, EmptyInputIsAnEmptyTrace) {
  const timeline::Timeline empty;
  const Written w = write(empty);
  EXPECT_TRUE(w.json.at("traceEvents").empty());
  EXPECT_EQ(w.json.at("otherData").at("base_time_ns"), 0);
}

}  // namespace
}  // namespace chokepoint::exporters
