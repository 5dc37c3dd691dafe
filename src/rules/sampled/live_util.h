// Helpers shared by the sample rules (rules/sampled/ and the *_samples evaluators): series
// lookups, per-tick shares over a window, link ceilings, labels.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "rules/rule.h"

namespace chokepoint::rules::sampled {

using analyses::sampled::GpuLive;
using analyses::sampled::LiveAnalysis;
using analyses::sampled::ProcessLive;
using samples::MetricId;

// A value sampled this many intervals ago still describes the present tick: GPM metrics
// arrive every other tick and threads are visited in round robin (live_analysis.h).
constexpr int64_t kHeldIntervals = 2;
inline int64_t max_age_ns(const LiveAnalysis& la) { return kHeldIntervals * la.interval_ns; }

const samples::Series* gpu_series(const SampleEvidence& c, const GpuLive& g, MetricId m);
const samples::Series* proc_series(const SampleEvidence& c, int64_t pid, MetricId m);
const samples::Series* host_series(const SampleEvidence& c, MetricId m);

// Share (0..1) of `ticks` where `pred` holds, among the ticks where it could be judged
// (pred returns nullopt when its inputs are missing); nullopt when fewer than
// kMinJudgedTicks could (half a second at the default 100 ms).
constexpr int64_t kMinJudgedTicks = 5;
std::optional<double> tick_share(std::span<const int64_t> ticks,
                                 const std::function<std::optional<bool>(int64_t)>& pred);
// Every tick of the run.
inline std::span<const int64_t> run_ticks(const LiveAnalysis& la) { return la.tick_ns; }
// The ticks host-side rules judge: from the earliest start to the latest end of the
// judged GPUs' active windows (imports, CUDA start-up and teardown are not the job's
// steady state: input_bound read its libraries at 52 MB/s while starting), else every
// tick (no GPU used, or no GPU metrics).
std::span<const int64_t> work_ticks(const LiveAnalysis& la);
// Seconds from the first tick to the judged GPUs' first work; nullopt when no judged GPU
// was active (no GPU used, or no GPU metrics).
std::optional<double> first_gpu_work_s(const LiveAnalysis& la);
// The ticks before the judged GPUs' first work (empty when there was none).
std::span<const int64_t> startup_ticks(const LiveAnalysis& la);

// Theoretical PCIe bandwidth per direction, GB/s, of a link as sampled (generation and
// width arrive as doubles): machine/pcie_link.h's per-lane table times the lanes; 0 for
// an unknown generation or width.
double pcie_gbps_per_direction(double gen, double width);

// "GPU 0 (NVIDIA H200)".
std::string gpu_label(const GpuLive& g);
// The process that drives the GPU: the launched command or a torchrun rank.
bool is_main(const ProcessLive& p);
bool is_worker(const ProcessLive& p);

}  // namespace chokepoint::rules::sampled
