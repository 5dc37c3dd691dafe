// Test helpers for the sample rules: run one rule (or the diagnosis) on a synthetic
// recording, look up evidence by metric. Header-only; used by *_test.cc files only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "analyses/testing/recording_builder.h"
#include "rules/diagnose.h"

namespace chokepoint::rules::testing {

using chokepoint::testing::RecordingBuilder;
using samples::Entity;
using samples::MetricId;
using samples::ProcessRole;

// The rule whose samples evaluator is `fn`, over `rec` alone, as the engine runs it (its
// id and category stamped from the descriptor).
inline std::optional<Finding> run_rule(SampleFn fn, const samples::Recording& rec) {
  const analyses::sampled::LiveAnalysis la = analyses::sampled::analyze_recording(rec);
  const SampleEvidence se{rec, la};
  for (const Rule& r : all_rules()) {
    if (r.samples == fn) return evaluate_rule(r, EvidenceSet{.samples = &se});
  }
  ADD_FAILURE() << "no rule has this samples evaluator";
  return std::nullopt;
}

inline Diagnosis run_diagnosis(const samples::Recording& rec) {
  const analyses::sampled::LiveAnalysis la = analyses::sampled::analyze_recording(rec);
  return diagnose_samples(rec, la);
}

// Idle for 5 ticks (start-up), then active: fed (90%) every 5th tick, starved (20%)
// otherwise, on a 16-CPU host. The launched process is registered; its CPU and the
// DataLoader workers are the test's.
inline RecordingBuilder gpu_fed_every_fifth_tick() {
  RecordingBuilder b;
  b.host_fact("cpus", "16");
  b.gpu(0);
  b.series(MetricId::kGpuUtilization, Entity::gpu(0), [](int i) {
    return std::optional<double>(i < 5 ? 0 : i % 5 == 0 ? 90 : 20);
  });
  b.process(RecordingBuilder::kLaunchedPid, ProcessRole::kLaunched);
  return b;
}

// The evidence named `metric`; fails the test when absent.
inline const Evidence& ev(const Finding& f, std::string_view metric) {
  const auto it = std::find_if(f.evidence.begin(), f.evidence.end(),
                               [&](const Evidence& e) { return e.metric == metric; });
  if (it == f.evidence.end()) {
    ADD_FAILURE() << "no evidence " << metric << " in " << f.id;
    static const Evidence kNone{};
    return kNone;
  }
  return *it;
}

inline bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// Per-tick value functions for RecordingBuilder::series.
inline RecordingBuilder::Fn every(double v) {
  return [v](int) { return std::optional<double>(v); };
}
inline RecordingBuilder::Fn from(int first, double before, double after) {
  return [=](int i) { return std::optional<double>(i < first ? before : after); };
}
// Sampled on even ticks only, like GPM metrics.
inline RecordingBuilder::Fn even_ticks(RecordingBuilder::Fn f) {
  return [f](int i) { return i % 2 == 0 ? f(i) : std::nullopt; };
}

}  // namespace chokepoint::rules::testing
