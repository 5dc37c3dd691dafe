// Step inference (analyses/step_inference.h) on real traces from the H200, against the
// steps the workload itself marked: NVTX "step N" ranges in the CUPTI traces of
// tests/data/tracer/steps (recorded by tests/data/tracer/gpu_validate.sh), ProfilerStep#N
// in the Kineto fixtures. The annotations are removed and the steps inferred from the
// same trace must give the same step time; the warm-up steps before the first annotated
// one are also inferred, so there may be a few more.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyses/index.h"
#include "analyses/steps.h"
#include "importers/importer.h"
#include "timeline/import_stats.h"
#include "timeline/model.h"

namespace chokepoint {
namespace {

double median_ms(const analyses::StepWindows& w) {
  std::vector<double> d;
  for (const auto& s : w.steps) d.push_back(static_cast<double>(s.duration()) / 1e6);
  if (d.empty()) return 0;
  std::sort(d.begin(), d.end());
  return d[d.size() / 2];
}

struct Case {
  const char* path;             // under tests/data
  int64_t ops_per_step;         // the inferred period; 0: nothing to infer (whole trace)
  int64_t steps_per_annotated;  // 1, or inner iterations per annotated step
  int max_extra_steps;          // warm-up steps the annotations leave out
  int max_missing = 1;          // annotated steps not inferred (slow warm-up cycles left out)
};

class StepInference : public ::testing::TestWithParam<Case> {};

TEST_P(StepInference, MatchesAnnotatedSteps) {
  const Case c = GetParam();
  timeline::Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(importers::import_paths({std::string(CHOKEPOINT_TEST_DATA) + "/" + c.path}, tl, stats).ok());
  const auto ix = analyses::build_index(tl);
  const auto annotated = analyses::compute_step_windows(tl, ix);
  ASSERT_FALSE(annotated.inferred);
  ASSERT_GE(annotated.steps.size(), 3u);
  tl.steps = {};
  const auto inferred = analyses::compute_step_windows(tl, ix);
  if (c.ops_per_step == 0) {
    EXPECT_TRUE(inferred.whole_trace) << inferred.method;
    return;
  }
  ASSERT_TRUE(inferred.inferred) << inferred.method;
  EXPECT_NE(inferred.method.find(std::to_string(c.ops_per_step) + " ops per step"), std::string::npos)
      << inferred.method;
  const auto want = static_cast<int64_t>(annotated.steps.size()) * c.steps_per_annotated;
  const auto got = static_cast<int64_t>(inferred.steps.size());
  EXPECT_GE(got, want - c.max_missing * c.steps_per_annotated) << inferred.method;
  EXPECT_LE(got, want + c.max_extra_steps * c.steps_per_annotated) << inferred.method;
  const double ratio = median_ms(inferred) * static_cast<double>(c.steps_per_annotated) / median_ms(annotated);
  EXPECT_NEAR(ratio, 1.0, 0.05) << "inferred " << median_ms(inferred) << " ms, annotated " << median_ms(annotated)
                                << " ms";
}

// NVTX-annotated CUPTI traces: 5 warm-up steps run before the first annotated one.
// input_bound's DataLoader steps issue 64 ops in the compute stream and a few more on some
// steps; sync_bound has a .item() after each of its 8 layers, and every layer looks like
// an iteration (the limit of inference: the same ops and the same pause 8 times a step).
// The NVTX step windows themselves against the median step time each workload printed
// while it was traced (gpu_validate.sh's output, tests/data/tracer/README.md): the tracer,
// the importer and the step windows together. small_grid's Triton kernel is launched
// through the driver API (cuLaunchKernelEx): without that launch record its steps would
// be the NVTX ranges' CPU spans alone (0.04 ms).
struct Printed {
  const char* workload;
  double median_ms;
};

class NvtxSteps : public ::testing::TestWithParam<Printed> {};

TEST_P(NvtxSteps, StepTimeIsWhatTheWorkloadMeasured) {
  const Printed p = GetParam();
  timeline::Timeline tl;
  timeline::ImportStats stats;
  const std::string path = std::string(CHOKEPOINT_TEST_DATA) + "/tracer/steps/" + p.workload + ".cptrace.gz";
  ASSERT_TRUE(importers::import_paths({path}, tl, stats).ok());
  const auto w = analyses::compute_step_windows(tl, analyses::build_index(tl));
  EXPECT_EQ(w.method, "NVTX step ranges");
  EXPECT_NEAR(median_ms(w) / p.median_ms, 1.0, 0.05) << median_ms(w) << " ms";
}

INSTANTIATE_TEST_SUITE_P(Traced, NvtxSteps,
                         ::testing::Values(Printed{"healthy_bf16", 13.36}, Printed{"input_bound", 38.35},
                                           Printed{"fp32_gemm", 60.29}, Printed{"launch_bound", 2.13},
                                           Printed{"pageable_copy", 34.46}, Printed{"sync_bound", 11.05},
                                           Printed{"allocator_churn", 17.06}, Printed{"small_grid", 1.97}),
                         [](const auto& info) { return std::string(info.param.workload); });

// "tracer/steps/healthy_bf16.cptrace.gz" -> "healthy_bf16".
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string p = info.param.path;
  p = p.substr(p.rfind('/') + 1);  // "tracer/ddp" -> "ddp"
  return p.substr(0, p.find('.'));
}

INSTANTIATE_TEST_SUITE_P(Traced, StepInference,
                         ::testing::Values(Case{"tracer/steps/healthy_bf16.cptrace.gz", 99, 1, 6},
                                           Case{"tracer/steps/input_bound.cptrace.gz", 64, 1, 15},
                                           Case{"tracer/steps/launch_bound.cptrace.gz", 120, 1, 6},
                                           Case{"tracer/steps/pageable_copy.cptrace.gz", 4, 1, 6},
                                           Case{"tracer/steps/fp32_gemm.cptrace.gz", 43, 1, 6},
                                           Case{"tracer/steps/allocator_churn.cptrace.gz", 70, 1, 6},
                                           Case{"tracer/steps/sync_bound.cptrace.gz", 6, 8, 6},
                                           // DDP on 2 GPUs, one trace per rank: steps per rank (149 each).
                                           Case{"tracer/ddp", 169, 1, 0, 2}),
                         case_name);

// Kineto fixtures hold 3 profiled steps: a period needs 3 whole cycles, so where the
// first profiled step starts mid-cycle nothing is inferred.
INSTANTIATE_TEST_SUITE_P(
    Kineto, StepInference,
    ::testing::Values(Case{"kineto/healthy_bf16.json.gz", 99, 1, 0}, Case{"kineto/input_bound.json.gz", 64, 1, 0},
                      Case{"kineto/fp32_gemm.json.gz", 43, 1, 0}, Case{"kineto/allocator_churn.json.gz", 70, 1, 0},
                      Case{"kineto/elementwise_chain.json.gz", 10, 1, 1}, Case{"kineto/launch_bound.json.gz", 0, 1, 0},
                      Case{"kineto/pageable_copy.json.gz", 0, 1, 0}),
    case_name);

}  // namespace
}  // namespace chokepoint
