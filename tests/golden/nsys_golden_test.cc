// Golden test of the Nsight Systems importer (importers/nsys): real CUPTI recordings of
// the GPU machine, stored by tests/data/nsys/cptrace_to_nsys.py in the tables, columns and
// encodings of an nsys SQLite export (tests/data/nsys/README.md says why not `nsys export`
// itself). The importer must find what the program did (known_counts: 100 kernels, 10
// pageable copies, 5 stream syncs, 4 NVTX "step" ranges), and `analyze` of the export must
// say what it says of the same records read from the .cptrace.
#include <gtest/gtest.h>

#include <string>

#include "importers/importer.h"
#include "published_ceilings.h"
#include "rules/rule.h"

namespace {

using namespace chokepoint;
const std::string kData = std::string(CHOKEPOINT_TEST_DATA);

TEST(NsysGolden, KnownCountsAreImportedExactly) {
  timeline::Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(importers::import_paths({kData + "/nsys/known_counts_nvtx.sqlite"}, tl, stats).ok());
  ASSERT_EQ(tl.sources.size(), 1u);
  EXPECT_EQ(tl.sources[0].format, "nsys");
  int kernels = 0, copies = 0;
  for (size_t i = 0; i < tl.gpu_ops.size(); ++i) {
    if (tl.gpu_ops.kind[i] == timeline::GpuOpKind::kKernel) {
      ++kernels;
      EXPECT_EQ(tl.strings.view(tl.gpu_ops.name[i]), "scale(float*, int)");
      EXPECT_EQ(tl.gpu_ops.grid[i][0], (1 << 20) / 256);
      EXPECT_EQ(tl.gpu_ops.block[i][0], 256);
    } else if (tl.gpu_ops.kind[i] == timeline::GpuOpKind::kMemcpy) {
      ++copies;
      EXPECT_EQ(tl.gpu_ops.copy_kind[i], timeline::CopyKind::kHtoD);
      EXPECT_EQ(tl.gpu_ops.src_kind[i], timeline::MemKind::kPageable);  // nsys' enum, not CUPTI's
      EXPECT_EQ(tl.gpu_ops.dst_kind[i], timeline::MemKind::kDevice);
      EXPECT_EQ(tl.gpu_ops.bytes[i], 4 << 20);
    }
  }
  EXPECT_EQ(kernels, 100);
  EXPECT_EQ(copies, 10);
  ASSERT_EQ(tl.sync_events.size(), 5u);
  for (size_t i = 0; i < tl.sync_events.size(); ++i) {
    EXPECT_EQ(tl.sync_events.kind[i], timeline::SyncKind::kStreamSync);
    EXPECT_EQ(tl.sync_events.tid[i], 482) << "the thread of the cudaStreamSynchronize it ended";
  }
  EXPECT_EQ(tl.runtime_calls.size(), 117u);
  EXPECT_EQ(tl.steps.size(), 4u) << "the NVTX ranges named \"step\"";
  ASSERT_EQ(tl.devices.size(), 1u);
  EXPECT_EQ(tl.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(tl.devices[0].num_sms, 132);
  EXPECT_EQ(tl.devices[0].cc_major, 9);
}

// The same records read as a .cptrace and as an nsys export give the same report: the
// verdict, the findings, the steps and the estimates (within 1%: the replay takes the
// chokepoint tracer's cost out of a .cptrace; nsys' cost is not measured here).
void expect_same_report(const std::string& cptrace, const std::string& sqlite) {
  SCOPED_TRACE(sqlite);
  auto a = golden::analyze_fixture({kData + cptrace});
  auto b = golden::analyze_fixture({kData + sqlite});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  const report::Report& x = a.value();
  const report::Report& y = b.value();
  EXPECT_EQ(y.inputs[0].format, "nsys");
  EXPECT_EQ(rules::category_name(x.verdict.bound), rules::category_name(y.verdict.bound));
  ASSERT_EQ(x.findings.size(), y.findings.size());
  for (size_t i = 0; i < x.findings.size(); ++i) EXPECT_EQ(x.findings[i].id, y.findings[i].id);
  EXPECT_EQ(x.window.steps, y.window.steps);
  EXPECT_NEAR(x.window.analyzed_ms, y.window.analyzed_ms, 0.01 * x.window.analyzed_ms);
  ASSERT_FALSE(x.remedies.empty());
  ASSERT_EQ(x.remedies.size(), y.remedies.size());
  for (size_t i = 0; i < x.remedies.size(); ++i) {
    EXPECT_EQ(x.remedies[i].id, y.remedies[i].id);
    if (x.remedies[i].estimated_speedup && y.remedies[i].estimated_speedup) {
      EXPECT_NEAR(*x.remedies[i].estimated_speedup, *y.remedies[i].estimated_speedup,
                  0.01 * *x.remedies[i].estimated_speedup);
    }
  }
}

TEST(NsysGolden, ReportsAsTheCuptiTraceOfTheSameRecords) {
  expect_same_report("/tracer/known_counts_nvtx.rec/trace-482.cptrace", "/nsys/known_counts_nvtx.sqlite");
  expect_same_report("/tracer/steps/input_bound.cptrace.gz", "/nsys/input_bound.sqlite.gz");
}

}  // namespace
