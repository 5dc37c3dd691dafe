// The Kineto importer on real traces recorded on the H200 (tests/data/kineto). Expected
// numbers were read from the same files with Python's json module (parse_float=Decimal
// for exact times: ns = baseTimeNanoseconds + int(ts * 1000)); when a fixture is
// re-recorded, read them again the same way.
#include "importers/kineto/kineto_importer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "importers/importer.h"

namespace chokepoint::importers {
namespace {

using timeline::Timeline;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string fixture(const std::string& name) {
  return read_file(std::string(CHOKEPOINT_TEST_DATA) + "/kineto/" + name);
}

size_t count_kind(const Timeline& tl, timeline::GpuOpKind kind) {
  size_t n = 0;
  for (auto k : tl.gpu_ops.kind) n += k == kind;
  return n;
}

size_t count_api(const Timeline& tl, timeline::ApiKind api) {
  size_t n = 0;
  for (auto a : tl.runtime_calls.api) n += a == api;
  return n;
}

// Row of the first GPU op starting at `start`.
size_t gpu_row_at(const Timeline& tl, int64_t start) {
  for (size_t i = 0; i < tl.gpu_ops.size(); ++i) {
    if (tl.gpu_ops.start[i] == start) return i;
  }
  return SIZE_MAX;
}

class SyncHostBound : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(import_kineto_buffer(fixture("sync_host_bound.json.gz"), 0, tl, stats).ok());
    tl.finalize();
  }
  Timeline tl;
  timeline::ImportStats stats;
};

TEST_F(SyncHostBound, CountsEveryEventKind) {
  EXPECT_EQ(count_kind(tl, timeline::GpuOpKind::kKernel), 147u);
  EXPECT_EQ(count_kind(tl, timeline::GpuOpKind::kMemcpy), 24u);
  EXPECT_EQ(count_kind(tl, timeline::GpuOpKind::kMemset), 48u);
  EXPECT_EQ(count_api(tl, timeline::ApiKind::kRuntime), 220u);
  EXPECT_EQ(count_api(tl, timeline::ApiKind::kDriver), 24u);
  EXPECT_EQ(tl.cpu_ranges.size(), 615u);  // 612 cpu_op + 3 user_annotation
  EXPECT_EQ(tl.gpu_annotations.size(), 3u);
  EXPECT_EQ(tl.sync_events.size(), 0u);
  EXPECT_EQ(tl.thread_names.size(), 19u);  // 17 process names, 2 distinct thread names
  // 463 flows, 2 instants, 1 Trace span, 38 sort-index/label metadata events.
  EXPECT_EQ(stats.count("kineto_events_ignored"), 504);
  EXPECT_FALSE(stats.has_errors());
  for (const auto& s : stats.all()) {
    EXPECT_EQ(s.severity, Severity::kInfo) << s.name;
  }
}

TEST_F(SyncHostBound, ProfilerStepsAreSteps) {
  ASSERT_EQ(tl.steps.size(), 3u);
  EXPECT_EQ(tl.steps.number, (std::vector<int64_t>{3, 4, 5}));
  // ts 5106435402139.209 us, dur 16955.743 us, baseTimeNanoseconds 1790857026000000000.
  EXPECT_EQ(tl.steps.start[0], 1795963461402139209);
  EXPECT_EQ(tl.steps.end[0], 1795963461419094952);
  EXPECT_EQ(tl.steps.start[2], 1795963461436001840);
  EXPECT_EQ(tl.steps.end[2], 1795963461453601777);
  EXPECT_EQ(tl.steps.pid[1], 915);
  EXPECT_EQ(tl.steps.tid[1], 915);
  EXPECT_EQ(tl.steps.how[0], timeline::StepSource::kProfilerStep);
  EXPECT_EQ(stats.count("kineto_no_steps"), 0);
}

TEST_F(SyncHostBound, FirstKernelExactly) {
  // The bf16 copy kernel at ts 5106435402434.246 us, dur 1.120 us.
  const size_t i = gpu_row_at(tl, 1795963461402434246);
  ASSERT_NE(i, SIZE_MAX);
  const auto& g = tl.gpu_ops;
  EXPECT_EQ(g.start[i], tl.gpu_ops.start[0]);  // the earliest GPU op
  EXPECT_EQ(g.end[i], 1795963461402434246 + 1120);
  EXPECT_EQ(g.kind[i], timeline::GpuOpKind::kKernel);
  EXPECT_EQ(tl.strings.view(g.name[i]).substr(0, 48), "void at::native::vectorized_elementwise_kernel<8");
  EXPECT_EQ(g.stream[i], 7);
  EXPECT_EQ(tl.devices[g.device[i]].local_id, 0);
  EXPECT_EQ(g.correlation[i], 1756);
  EXPECT_EQ(g.external_id[i], 6);
  EXPECT_EQ(g.grid[i], (std::array<int32_t, 3>{4, 1, 1}));
  EXPECT_EQ(g.block[i], (std::array<int32_t, 3>{128, 1, 1}));
  EXPECT_EQ(g.registers[i], 32);
  EXPECT_EQ(g.shared_mem[i], 0);
  EXPECT_EQ(g.occupancy_pct[i], 0.0f);
  EXPECT_EQ(g.bytes[i], 0);
}

TEST_F(SyncHostBound, NvjetKernelLaunchedByDriver) {
  const size_t i = gpu_row_at(tl, 1795963461402651046);
  ASSERT_NE(i, SIZE_MAX);
  const auto& g = tl.gpu_ops;
  EXPECT_EQ(tl.strings.view(g.name[i]).substr(0, 20), "nvjet_sm90_tst_256x1");
  EXPECT_EQ(g.registers[i], 168);
  EXPECT_EQ(g.shared_mem[i], 213188);
  EXPECT_EQ(g.grid[i], (std::array<int32_t, 3>{2, 66, 1}));
  EXPECT_EQ(g.block[i], (std::array<int32_t, 3>{384, 1, 1}));
  EXPECT_EQ(g.correlation[i], 1812);
  // Its launch is the cuLaunchKernelEx driver call with the same correlation.
  bool found = false;
  for (size_t r = 0; r < tl.runtime_calls.size(); ++r) {
    if (tl.runtime_calls.correlation[r] != 1812) continue;
    found = true;
    EXPECT_EQ(tl.strings.view(tl.runtime_calls.name[r]), "cuLaunchKernelEx");
    EXPECT_EQ(tl.runtime_calls.api[r], timeline::ApiKind::kDriver);
    EXPECT_EQ(tl.runtime_calls.cbid[r], 652);
    EXPECT_EQ(tl.runtime_calls.external_id[r], 19);
  }
  EXPECT_TRUE(found);
}

TEST_F(SyncHostBound, CopiesAndMemsets) {
  const auto& g = tl.gpu_ops;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] == timeline::GpuOpKind::kMemcpy) {
      EXPECT_EQ(tl.strings.view(g.name[i]), "Memcpy DtoH (Device -> Pinned)");
      EXPECT_EQ(g.copy_kind[i], timeline::CopyKind::kDtoH);
      EXPECT_EQ(g.src_kind[i], timeline::MemKind::kDevice);
      EXPECT_EQ(g.dst_kind[i], timeline::MemKind::kPinned);
      EXPECT_EQ(g.bytes[i], 4);
    } else if (g.kind[i] == timeline::GpuOpKind::kMemset) {
      EXPECT_EQ(g.dst_kind[i], timeline::MemKind::kDevice);
      EXPECT_EQ(g.src_kind[i], timeline::MemKind::kUnknown);
      EXPECT_GE(g.bytes[i], 0);
    }
  }
}

TEST_F(SyncHostBound, DeviceProperties) {
  ASSERT_EQ(tl.devices.size(), 1u);
  const auto& d = tl.devices[0];
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.num_sms, 132);
  EXPECT_EQ(d.total_memory_bytes, 150109880320);
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.cc_minor, 0);
  EXPECT_EQ(d.max_threads_per_sm, 2048);
  EXPECT_EQ(d.regs_per_sm, 65536);
  EXPECT_EQ(d.shared_mem_per_sm, 233472);
  EXPECT_EQ(tl.sources[0].base_time_ns, 1790857026000000000);
  EXPECT_EQ(tl.sources[0].rank, -1);
  EXPECT_EQ(stats.count("kineto_unknown_device"), 0);
}

TEST_F(SyncHostBound, LinearInputShapes) {
  // First aten::linear: ts 5106435402297.593 us, Input type [float x3],
  // Input Dims [[4096, 4096], [4096, 4096], [4096]], External id 2.
  const auto& c = tl.cpu_ranges;
  size_t i = 0;
  while (i < c.size() && c.start[i] != 1795963461402297593) ++i;
  ASSERT_LT(i, c.size());
  EXPECT_EQ(tl.strings.view(c.name[i]), "aten::linear");
  EXPECT_EQ(c.category[i], timeline::CpuCategory::kOp);
  EXPECT_EQ(c.external_id[i], 2);
  EXPECT_EQ(c.end[i], 1795963461402297593 + 360626);
  ASSERT_NE(c.inputs[i], timeline::CpuRanges::kNoInputs);
  const auto& in = tl.op_inputs;
  const uint32_t op = c.inputs[i];
  ASSERT_EQ(in.num_inputs(op), 3u);
  for (uint32_t j = 0; j < 3; ++j) EXPECT_EQ(tl.strings.view(in.input_type(op, j)), "float");
  ASSERT_EQ(in.rank(op, 0), 2u);
  EXPECT_EQ(in.dim(op, 0, 0), 4096);
  EXPECT_EQ(in.dim(op, 0, 1), 4096);
  ASSERT_EQ(in.rank(op, 2), 1u);
  EXPECT_EQ(in.dim(op, 2, 0), 4096);
}

TEST_F(SyncHostBound, ThreadNames) {
  bool stream = false, thread = false;
  for (const auto& t : tl.thread_names) {
    if (t.pid == 0 && t.tid == 7) stream = t.name == "stream 7 ";
    if (t.pid == 915 && t.tid == 915) thread = t.name == "thread 915 (python3)";
  }
  EXPECT_TRUE(stream);
  EXPECT_TRUE(thread);
}

// Counts per fixture: GPU ops, CPU ranges, runtime+driver calls, GPU annotations,
// ProfilerStep steps, distinct process/thread names, ignored events.
struct FixtureCounts {
  const char* file;
  size_t gpu, cpu, runtime, gpu_annotations, steps, names;
  int64_t ignored;
};

class AllFixtures : public ::testing::TestWithParam<FixtureCounts> {};

TEST_P(AllFixtures, ImportCleanly) {
  const FixtureCounts& want = GetParam();
  Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(import_kineto_buffer(fixture(want.file), 0, tl, stats).ok());
  EXPECT_EQ(tl.gpu_ops.size(), want.gpu);
  EXPECT_EQ(tl.cpu_ranges.size(), want.cpu);
  EXPECT_EQ(tl.runtime_calls.size(), want.runtime);
  EXPECT_EQ(tl.gpu_annotations.size(), want.gpu_annotations);
  EXPECT_EQ(tl.steps.size(), want.steps);
  EXPECT_EQ(tl.thread_names.size(), want.names);
  EXPECT_EQ(stats.count("kineto_events_ignored"), want.ignored);
  ASSERT_EQ(stats.all().size(), 1u);  // nothing odd besides the skipped flows/metadata
}

INSTANTIATE_TEST_SUITE_P(Kineto, AllFixtures,
                         ::testing::Values(FixtureCounts{"allocator_churn.json.gz", 210, 738, 354, 9, 3, 20, 726},
                                           FixtureCounts{"elementwise_chain.json.gz", 46, 36, 31, 3, 3, 19, 118},
                                           FixtureCounts{"fp32_gemm.json.gz", 212, 534, 151, 6, 3, 20, 489},
                                           FixtureCounts{"healthy_bf16.json.gz", 422, 1746, 328, 6, 3, 20, 1128},
                                           FixtureCounts{"healthy_bf16_stack.json.gz", 405, 3475, 328, 6, 3, 20, 1669},
                                           FixtureCounts{"input_bound.json.gz", 192, 894, 325, 6, 3, 20, 661},
                                           FixtureCounts{"input_bound_stack.json.gz", 192, 4678, 325, 6, 3, 20, 967},
                                           FixtureCounts{"launch_bound.json.gz", 360, 1083, 361, 3, 3, 19, 762},
                                           FixtureCounts{"pageable_copy.json.gz", 14, 39, 22, 3, 3, 19, 77},
                                           FixtureCounts{"small_grid.json.gz", 4, 3, 4, 3, 3, 19, 49},
                                           FixtureCounts{"sync_bound.json.gz", 144, 267, 169, 3, 3, 19, 354},
                                           FixtureCounts{"sync_host_bound.json.gz", 219, 615, 244, 3, 3, 19, 504}),
                         [](const auto& info) {
                           std::string n = info.param.file;
                           return n.substr(0, n.find('.'));
                         });

TEST(KinetoSources, IdsAreUniqueAcrossSources) {
  Timeline tl;
  timeline::ImportStats stats;
  const std::string bytes = fixture("sync_host_bound.json.gz");
  ASSERT_TRUE(import_kineto_buffer(bytes, 0, tl, stats).ok());
  ASSERT_TRUE(import_kineto_buffer(bytes, 1, tl, stats).ok());
  ASSERT_EQ(tl.sources.size(), 2u);
  ASSERT_EQ(tl.devices.size(), 2u);  // device 0 of each source
  const size_t half = tl.gpu_ops.size() / 2;
  EXPECT_EQ(tl.gpu_ops.correlation[half] - tl.gpu_ops.correlation[0], int64_t{1} << 48);
  EXPECT_EQ(tl.gpu_ops.external_id[half] - tl.gpu_ops.external_id[0], int64_t{1} << 48);
  EXPECT_EQ(tl.gpu_ops.start[half], tl.gpu_ops.start[0]);
  EXPECT_EQ(tl.devices[tl.gpu_ops.device[half]].source_index, 1);
  EXPECT_EQ(tl.devices[1].name, "NVIDIA H200");
}

// Every column of every table, for comparing two imports.
template <typename Table>
void expect_same_table(Table& a, Table& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  size_t k = 0;
  std::vector<const void*> cols_b;
  b.for_each_column([&](auto& col) { cols_b.push_back(&col); });
  a.for_each_column([&](auto& col) {
    using Col = std::decay_t<decltype(col)>;
    const Col& other = *static_cast<const Col*>(cols_b[k]);
    for (size_t i = 0; i < col.size(); ++i) {
      // NaN occupancy compares unequal to itself: compare bytes.
      if (std::memcmp(&col[i], &other[i], sizeof(col[i])) != 0) {
        ADD_FAILURE() << what << " column " << k << " row " << i;
        break;
      }
    }
    ++k;
  });
}

TEST(KinetoChunks, EventsSplitAcrossChunksReadTheSame) {
  const std::string bytes = fixture("healthy_bf16.json.gz");
  Timeline want;
  timeline::ImportStats want_stats;
  ASSERT_TRUE(import_kineto_buffer(bytes, 0, want, want_stats).ok());
  for (size_t chunk : {1, 2, 7, 63, 64, 65, 4093}) {
    SCOPED_TRACE(chunk);
    KinetoLimits limits;
    limits.chunk_bytes = chunk;
    limits.batch_bytes = chunk * 3;
    Timeline tl;
    timeline::ImportStats stats;
    ASSERT_TRUE(import_kineto_buffer(bytes, 0, tl, stats, limits).ok());
    expect_same_table(want.gpu_ops, tl.gpu_ops, "gpu_ops");
    expect_same_table(want.cpu_ranges, tl.cpu_ranges, "cpu_ranges");
    expect_same_table(want.runtime_calls, tl.runtime_calls, "runtime_calls");
    expect_same_table(want.steps, tl.steps, "steps");
    EXPECT_EQ(want.op_inputs.dims, tl.op_inputs.dims);
    EXPECT_EQ(stats.count("kineto_events_ignored"), want_stats.count("kineto_events_ignored"));
    EXPECT_EQ(stats.all().size(), want_stats.all().size());
  }
}

}  // namespace
}  // namespace chokepoint::importers
