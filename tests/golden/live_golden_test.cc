// Golden tests of live sampling: recordings made by `chokepoint run` on the H200
// (tests/data/live, with the script that recorded them) in, verdict and findings out.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "live/session.h"
#include "pipeline/analyze_pipeline.h"
#include "pipeline/live_report.h"
#include "published_ceilings.h"

namespace {

const std::string kLive = std::string(CHOKEPOINT_TEST_DATA) + "/live/";

nlohmann::json expected() {
  std::ifstream in(kLive + "expected.json");
  return nlohmann::json::parse(in);
}

class LiveGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(LiveGolden, VerdictAndFindings) {
  const std::string name = GetParam();
  const nlohmann::json e = expected()[name];
  auto r = chokepoint::golden::analyze_fixture({kLive + name});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& rep = r.value();
  ASSERT_TRUE(rep.live.has_value());
  EXPECT_EQ(chokepoint::rules::category_name(rep.verdict.bound), e["verdict"].get<std::string>())
      << rep.verdict.summary;
  auto has = [&](const std::string& id) {
    return std::any_of(rep.findings.begin(), rep.findings.end(), [&](const auto& f) { return f.id == id; });
  };
  std::string ids;
  for (const auto& f : rep.findings) ids += f.id + " ";
  for (const auto& id : e["findings"]) EXPECT_TRUE(has(id)) << name << ": expected " << id << ", got " << ids;
  for (const auto& id : e["absent"]) EXPECT_FALSE(has(id)) << name << ": " << id << " must not fire; got " << ids;
  if (e.contains("title_has") && !rep.findings.empty()) {
    EXPECT_NE(rep.findings.front().title.find(e["title_has"].get<std::string>()), std::string::npos)
        << rep.findings.front().title;
  }
  EXPECT_TRUE(rep.live->complete);
  EXPECT_GT(rep.live->ticks, 100);
}

INSTANTIATE_TEST_SUITE_P(H200, LiveGolden,
                         ::testing::Values("input_bound", "input_bound_fixed", "watch_input_bound", "healthy_bf16",
                                           "launch_bound", "pageable_copy", "small_grid", "gil_threads", "busy_process",
                                           "ddp_2gpu"));

// The live view's verdict (pipeline::live_verdict_line over the last minute of ticks, as
// `run` computes it every 5 s) agrees with the end report's on each recording: the same
// engine over the same samples (these runs last 20 s). The ticks are rebuilt from the
// recording's series.
TEST(LiveGoldenVerdict, TheLiveVerdictAgreesWithTheEndReport) {
  for (const std::string name : {"input_bound", "input_bound_fixed", "healthy_bf16", "launch_bound", "pageable_copy",
                                 "small_grid", "gil_threads"}) {
    auto rec = chokepoint::samples::read_recording(kLive + name);
    ASSERT_TRUE(rec.ok()) << name;
    std::map<int64_t, chokepoint::samples::Tick> by_time;
    for (const auto& s : rec.value().samples.series()) {
      for (size_t i = 0; i < s.size(); ++i) {
        auto& t = by_time[s.time_ns[i]];
        t.time_ns = s.time_ns[i];
        t.samples.push_back({s.metric, s.entity, s.values[i], s.valid[i] != 0});
      }
    }
    std::deque<chokepoint::samples::Tick> ticks;
    for (auto& [time, t] : by_time) {
      if (time >= by_time.rbegin()->first - chokepoint::live::Session::kRecentNs) ticks.push_back(std::move(t));
    }
    std::map<int64_t, chokepoint::samples::ProcessMeta> procs;
    for (const auto& p : rec.value().meta.processes) procs[p.pid] = p;
    const std::string line = chokepoint::pipeline::live_verdict_line(rec.value().meta, procs, ticks);
    auto end = chokepoint::golden::analyze_fixture({kLive + name});
    ASSERT_TRUE(end.ok());
    const std::string bound = chokepoint::rules::category_name(end.value().verdict.bound);
    EXPECT_EQ(line.rfind(bound, 0), 0u) << name << ": live '" << line << "', end report " << bound;
    if (!end.value().findings.empty() && bound != "unknown") {
      EXPECT_NE(line.find(end.value().findings.front().id), std::string::npos)
          << name << ": live '" << line << "', end report's first finding " << end.value().findings.front().id;
    }
  }
}

// The figures behind the verdicts, from the samples themselves.
TEST(LiveGoldenFigures, WhatTheGpuDidInEachWorkload) {
  auto load = [](const std::string& name) {
    auto r = chokepoint::golden::analyze_fixture({kLive + name});
    EXPECT_TRUE(r.ok());
    return r.value();
  };
  const auto healthy = load("healthy_bf16");
  ASSERT_FALSE(healthy.live->gpus.empty());
  const auto& hg = healthy.live->gpus[0];
  EXPECT_TRUE(hg.used);
  EXPECT_GT(hg.sm_active_pct->mean, 80.0);      // a busy GPU
  EXPECT_GT(hg.tensor_active_pct->mean, 30.0);  // on tensor cores
  const auto small = load("small_grid");
  const auto& sg = small.live->gpus[0];
  EXPECT_GT(sg.util_pct->mean, 80.0);       // nvidia-smi says busy ...
  EXPECT_LT(sg.sm_active_pct->mean, 20.0);  // ... 16 blocks on 132 SMs say otherwise
  const auto fixed = load("input_bound_fixed");
  int workers = 0;
  for (const auto& p : fixed.live->top_processes) workers += p.role == "dataloader_worker";
  EXPECT_GE(workers, 6);  // the busiest 8 processes: the main one and loader workers
  // torchrun on two GPUs: each GPU matched to its rank by PID, both judged.
  const auto ddp = load("ddp_2gpu");
  ASSERT_EQ(ddp.live->gpus.size(), 2u);
  EXPECT_TRUE(ddp.live->gpus[0].used && ddp.live->gpus[1].used);
  EXPECT_TRUE(ddp.live->gpu_note.empty()) << "PIDs matched: no fallback";
  int ranks = 0;
  for (const auto& p : ddp.live->top_processes) ranks += p.role == "torchrun_rank";
  EXPECT_EQ(ranks, 2);
  EXPECT_EQ(ddp.devices.size(), 2u);
  const auto gil = load("gil_threads");
  EXPECT_FALSE(gil.live->gpus.empty());
  EXPECT_FALSE(gil.live->gpus[0].used);  // the GPU was there, the workload did not use it
}

}  // namespace
