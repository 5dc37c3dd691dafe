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

inline std::optional<Finding> run_rule(SampleFn fn, const samples::Recording& rec) {
  const analyses::live::LiveAnalysis la = analyses::live::analyze_recording(rec);
  return fn(SampleEvidence{rec, la});
}

inline Diagnosis run_diagnosis(const samples::Recording& rec) {
  const analyses::live::LiveAnalysis la = analyses::live::analyze_recording(rec);
  return diagnose_samples(rec, la);
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
