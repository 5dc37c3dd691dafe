// Host hot spots from real traces: torch.profiler(with_stack=True) traces recorded on the
// H200 by tests/data/workloads/record.py (their python_function ranges are the stacks).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"

namespace chokepoint {
namespace {

const std::string kDir = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/";

// input_bound: the dataset's __getitem__ runs in the main process (num_workers=0): the
// GPU's idle time goes to the line that makes a sample, workloads.py:43.
TEST(StacksGolden, InputBoundNamesTheDatasetLine) {
  auto r = chokepoint::golden::analyze_fixture({kDir + "input_bound_stack.json.gz"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->host.has_value());
  const auto& h = *r->host;
  EXPECT_EQ(h.method, "trace");
  EXPECT_EQ(h.thread, "thread 1457 of pid 1457");
  EXPECT_GT(h.covered_idle_s, 0.95 * h.gpu_idle_s);
  ASSERT_FALSE(h.spots.empty());
  EXPECT_EQ(h.spots[0].frame.file, "workloads.py");
  EXPECT_EQ(h.spots[0].frame.line, 43);
  EXPECT_EQ(h.spots[0].frame.function, "__getitem__");
  EXPECT_EQ(h.spots[0].cls, analyses::HostClass::kData);
  EXPECT_GT(h.idle_share(analyses::HostClass::kData), 0.8);
  // The trace's own finding carries the line and both sources.
  ASSERT_FALSE(r->findings.empty());
  const auto& f = r->findings.front();
  EXPECT_EQ(f.id, "input-pipeline-stall");
  EXPECT_EQ(f.title.rfind("workloads.py:43 in __getitem__()", 0), 0u) << f.title;
  EXPECT_EQ(f.sources, (std::vector<std::string>{"trace", "stacks"}));
}

// healthy_bf16: the GPU is busy; what little idle time there is gets no finding.
TEST(StacksGolden, HealthyGetsNoHostFinding) {
  auto r = chokepoint::golden::analyze_fixture({kDir + "healthy_bf16_stack.json.gz"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->host.has_value());
  for (const auto& f : r->findings) {
    EXPECT_TRUE(std::find(f.sources.begin(), f.sources.end(), "stacks") == f.sources.end()) << f.id << ": " << f.title;
  }
}

}  // namespace
}  // namespace chokepoint
