// How each kind of Kineto event lands in the model, on small hand-made traces.
#include <gtest/gtest.h>

#include "importers/kineto/kineto_importer.h"

namespace chokepoint::importers {
namespace {

using timeline::Timeline;

struct Imported {
  Status status;
  Timeline tl;
  timeline::ImportStats stats;
};

std::unique_ptr<Imported> import(const std::string& bytes) {
  auto r = std::make_unique<Imported>();
  r->status = import_kineto_buffer(bytes, 0, r->tl, r->stats);
  return r;
}

TEST(KinetoMapping, MetadataAfterTraceEvents) {
  // Real files put baseTimeNanoseconds and deviceProperties before or after traceEvents.
  auto r = import(R"({
  "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": "12.5", "dur": 3,
     "args": {"device": 1, "stream": 7}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#41", "pid": 5, "tid": 6,
     "ts": 10, "dur": 0.0015}
  ],
  "systemTraceEvents": "skipped: } ] \" {",
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_count": 2},
  "deviceProperties": [{"id": 1, "name": "NVIDIA H200", "numSms": 132, "computeMajor": 9}],
  "baseTimeNanoseconds": 1790857026000000000
})");
  ASSERT_TRUE(r->status.ok()) << r->status.message();
  const Timeline& tl = r->tl;
  ASSERT_EQ(tl.gpu_ops.size(), 1u);
  EXPECT_EQ(tl.gpu_ops.start[0], 1790857026000012500);
  EXPECT_EQ(tl.gpu_ops.end[0], 1790857026000015500);
  ASSERT_EQ(tl.devices.size(), 1u);
  EXPECT_EQ(tl.devices[0].local_id, 1);
  EXPECT_EQ(tl.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(tl.devices[0].num_sms, 132);
  EXPECT_EQ(tl.devices[0].cc_major, 9);
  EXPECT_EQ(tl.devices[0].cc_minor, -1);
  EXPECT_EQ(tl.sources[0].rank, 3);
  EXPECT_EQ(tl.sources[0].world_size, 8);
  EXPECT_EQ(tl.sources[0].backend, "nccl");
  EXPECT_EQ(tl.sources[0].base_time_ns, 1790857026000000000);
  ASSERT_EQ(tl.steps.size(), 1u);
  EXPECT_EQ(tl.steps.number[0], 41);
  EXPECT_EQ(tl.steps.start[0], 1790857026000010000);
  EXPECT_EQ(tl.steps.end[0], 1790857026000010002);  // 1.5 ns rounds away from zero
  EXPECT_EQ(tl.steps.pid[0], 5);
  EXPECT_EQ(tl.steps.tid[0], 6);
  EXPECT_EQ(r->stats.all().size(), 0u);
}

TEST(KinetoMapping, SyncRecordsTakeTheThreadOfTheirCall) {
  auto r = import(R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 580, "tid": 581,
     "ts": 100, "dur": 50, "args": {"cbid": 131, "correlation": 77, "External id": 12}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 101,
     "dur": 48, "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 77,
     "device": 0, "context": 1}},
    {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": -1, "ts": 200,
     "dur": 5, "args": {"cuda_sync_kind": "Context Sync", "stream": -1, "correlation": 90,
     "device": 0}},
    {"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 0, "tid": 7, "ts": 300,
     "dur": 5, "args": {"stream": 7, "device": 0}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 400,
     "dur": 5, "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "device": 0}}
  ]})");
  ASSERT_TRUE(r->status.ok());
  const auto& s = r->tl.sync_events;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s.kind[0], timeline::SyncKind::kStreamSync);
  EXPECT_EQ(s.pid[0], 580);
  EXPECT_EQ(s.tid[0], 581);
  EXPECT_EQ(s.stream[0], 7);
  EXPECT_EQ(s.correlation[0], 77);
  EXPECT_EQ(r->tl.devices[s.device[0]].local_id, 0);
  EXPECT_EQ(s.kind[1], timeline::SyncKind::kContextSync);
  EXPECT_EQ(s.stream[1], -1);
  EXPECT_EQ(s.pid[1], -1);                               // no runtime call with correlation 90
  EXPECT_EQ(s.kind[2], timeline::SyncKind::kEventSync);  // from the name
  EXPECT_EQ(s.correlation[2], -1);
  EXPECT_EQ(s.kind[3], timeline::SyncKind::kStreamWaitEvent);
  const auto& rt = r->tl.runtime_calls;
  ASSERT_EQ(rt.size(), 1u);
  EXPECT_EQ(rt.cbid[0], 131);
  EXPECT_EQ(rt.external_id[0], 12);
}

TEST(KinetoMapping, CategoriesAndInputs) {
  auto r = import(R"([
    {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 2,
     "ts": 1, "dur": 9},
    {"ph": "X", "cat": "overhead", "name": "Instrumentation", "pid": 1, "tid": 2, "ts": 2,
     "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "pid": 1, "tid": 2, "ts": 3, "dur": 1,
     "args": {"External id": 4, "Sequence number": 17,
              "Input type": ["TensorList", "Scalar"], "Input Dims": [[[2, 3], [4, 3]], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 4, "dur": 1,
     "args": {"Input Dims": [[8, 16], [16, 4]]}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#x", "pid": 1, "tid": 2,
     "ts": 5, "dur": 1},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7,
     "ts": 6, "dur": 1},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "old"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "main"}},
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
    {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 7, "s": "t"},
    {"ph": "s", "id": 1, "pid": 1, "tid": 2, "ts": 7, "cat": "ac2g", "name": "ac2g"},
    {"ph": "C", "name": "mem", "pid": 1, "ts": 7, "args": {"bytes": 5}}
  ])");
  ASSERT_TRUE(r->status.ok());
  const Timeline& tl = r->tl;
  const auto& c = tl.cpu_ranges;
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c.category[0], timeline::CpuCategory::kPythonFunction);
  EXPECT_EQ(c.category[1], timeline::CpuCategory::kOther);
  EXPECT_EQ(c.category[2], timeline::CpuCategory::kOp);
  EXPECT_EQ(c.external_id[2], 4);
  EXPECT_EQ(c.sequence[2], 17);
  EXPECT_EQ(c.inputs[0], timeline::CpuRanges::kNoInputs);
  const auto& in = tl.op_inputs;
  const uint32_t cat_op = c.inputs[2];
  ASSERT_EQ(in.num_inputs(cat_op), 2u);
  EXPECT_EQ(tl.strings.view(in.input_type(cat_op, 0)), "TensorList");
  EXPECT_EQ(in.rank(cat_op, 0), 0u);  // a list of tensors has no single shape
  EXPECT_EQ(in.rank(cat_op, 1), 0u);
  const uint32_t mm = c.inputs[3];
  ASSERT_EQ(in.num_inputs(mm), 2u);
  EXPECT_EQ(in.input_type(mm, 0), timeline::kEmptyString);  // no Input type given
  EXPECT_EQ(in.dim(mm, 1, 0), 16);
  EXPECT_EQ(in.dim(mm, 1, 1), 4);
  EXPECT_EQ(c.category[4], timeline::CpuCategory::kUserAnnotation);
  EXPECT_EQ(tl.steps.size(), 0u);  // ProfilerStep#x is no step; GPU annotations are none
  ASSERT_EQ(tl.gpu_annotations.size(), 1u);
  EXPECT_EQ(tl.gpu_annotations.stream[0], 7);
  ASSERT_EQ(tl.thread_names.size(), 2u);
  EXPECT_EQ(tl.thread_names[0].name, "main");
  EXPECT_EQ(tl.thread_names[1].tid, -1);
  EXPECT_EQ(r->stats.count("kineto_events_ignored"), 3);
  EXPECT_EQ(r->stats.count("kineto_no_steps"), 1);
}

TEST(KinetoMapping, BadMetadataIsCountedNotFatal) {
  auto r = import(R"({"deviceProperties": "oops", "baseTimeNanoseconds": N/A,
    "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1,
                     "dur": 1}]
    , "trailing": [1, 2} garbage)");
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->tl.cpu_ranges.size(), 1u);
  EXPECT_EQ(r->tl.cpu_ranges.start[0], 1000);
  EXPECT_GE(r->stats.count("kineto_bad_metadata"), 2);
}

TEST(KinetoMapping, SniffAcceptsTracesOnly) {
  EXPECT_TRUE(sniff_kineto("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ["));
  EXPECT_TRUE(sniff_kineto(R"({"traceEvents": [)"));
  EXPECT_TRUE(sniff_kineto("\xef\xbb\xbf  [ {\"name\": \"a\", \"ph\": \"X\""));
  EXPECT_TRUE(sniff_kineto(R"({"otherData": {}, "events": [{"ph": "X"}]})"));
  EXPECT_FALSE(sniff_kineto(R"({"allocator_churn": {"device": "NVIDIA H200"}})"));
  EXPECT_FALSE(sniff_kineto(R"({"schemaVersion": 1})"));
  EXPECT_FALSE(sniff_kineto("\x1f\x8b\x08"));
  EXPECT_FALSE(sniff_kineto("ID,Kernel Name,\"ph\""));
  EXPECT_FALSE(sniff_kineto("[1, 2, \"ph\"]"));
  EXPECT_FALSE(sniff_kineto(""));
}

}  // namespace
}  // namespace chokepoint::importers
