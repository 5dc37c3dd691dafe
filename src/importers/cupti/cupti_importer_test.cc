// The CUPTI tracer's files: written by tracer/trace_writer (what the injection library
// runs), read back into the model.
#include "importers/cupti/cupti_importer.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "importers/step_ranges.h"
#include "tracer/trace_writer.h"

namespace chokepoint::importers {
namespace {

using timeline::CopyKind;
using timeline::GpuOpKind;
using timeline::MemKind;
using timeline::SyncKind;
using tracer::Record;
using tracer::RecordKind;

tracer::FileHeader header(int64_t pid, int64_t realtime, int64_t cupti) {
  tracer::FileHeader h{};
  std::memcpy(h.magic, tracer::kMagic, sizeof h.magic);
  h.version = tracer::kFormatVersion;
  h.record_size = sizeof(Record);
  h.pid = pid;
  h.realtime_ns = realtime;
  h.cupti_ns = cupti;
  return h;
}

std::string dir() {
  const std::string d = ::testing::TempDir() + "/cupti_" + std::to_string(getpid());
  std::filesystem::create_directories(d);
  return d;
}

// A launch, its kernel, a pageable copy with its memcpy call, a stream sync.
std::string write_trace(int64_t pid, int64_t realtime, int64_t cupti, bool finish) {
  std::string error;
  std::filesystem::remove(tracer::trace_file_path(dir(), pid));
  auto w = tracer::TraceWriter::create(dir(), header(pid, realtime, cupti), &error);
  EXPECT_TRUE(w) << error;
  Record dev{};
  dev.kind = static_cast<uint8_t>(RecordKind::kDevice);
  dev.name = w->intern("NVIDIA H200");
  dev.start = 150'000'000'000;
  dev.correlation = 132;
  dev.stream = 90;
  w->add(dev);
  Record launch{};
  launch.kind = static_cast<uint8_t>(RecordKind::kRuntimeApi);
  launch.name = w->intern("cudaLaunchKernel_v7000");
  launch.start = 1000;
  launch.end = 1005;
  launch.correlation = 7;
  launch.stream = 4243;  // thread id
  launch.api.pid = static_cast<uint32_t>(pid);
  launch.api.cbid = 211;
  w->add(launch);
  Record k{};
  k.kind = static_cast<uint8_t>(RecordKind::kKernel);
  k.name = w->intern("_Z5scalePfi");
  k.start = 1010;
  k.end = 1110;
  k.correlation = 7;
  k.stream = 7;
  k.kernel.grid[0] = 16;
  k.kernel.grid[1] = k.kernel.grid[2] = 1;
  k.kernel.block[0] = 256;
  k.kernel.block[1] = k.kernel.block[2] = 1;
  k.kernel.registers = 32;
  k.kernel.shared_bytes = 1024;
  w->add(k);
  Record copy_call = launch;
  copy_call.name = w->intern("cudaMemcpy_v3020");
  copy_call.start = 1200;
  copy_call.end = 1400;
  copy_call.correlation = 8;
  w->add(copy_call);
  Record c{};
  c.kind = static_cast<uint8_t>(RecordKind::kMemcpy);
  c.sub = 1;  // HtoD
  c.start = 1250;
  c.end = 1390;
  c.correlation = 8;
  c.stream = 7;
  c.copy.bytes = 1 << 20;
  c.copy.src_kind = 1;  // pageable
  c.copy.dst_kind = 3;  // device
  w->add(c);
  Record sync_call = launch;
  sync_call.name = w->intern("cudaStreamSynchronize_v3020");
  sync_call.start = 1500;
  sync_call.end = 1600;
  sync_call.correlation = 9;
  w->add(sync_call);
  Record s{};
  s.kind = static_cast<uint8_t>(RecordKind::kSync);
  s.sub = 3;  // stream
  s.start = 1500;
  s.end = 1600;
  s.correlation = 9;
  s.stream = 7;
  w->add(s);
  if (finish) {
    EXPECT_TRUE(w->finish(5));
  } else {
    EXPECT_TRUE(w->flush());
  }
  std::ifstream in(w->path(), std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(CuptiImporter, ReadsWhatTheTracerWrites) {
  const std::string bytes = write_trace(4242, 0, 0, true);
  EXPECT_EQ(bytes.size() % 64, 0u);
  EXPECT_TRUE(sniff_cupti(bytes));
  timeline::Timeline tl;
  tl.sources.emplace_back().path = "trace-4242.cptrace";
  timeline::ImportStats stats;
  ASSERT_TRUE(import_cupti_buffer(bytes, 0, tl, stats).ok());
  EXPECT_EQ(tl.sources[0].format, "cupti");
  ASSERT_EQ(tl.gpu_ops.size(), 2u);
  EXPECT_EQ(tl.gpu_ops.kind[0], GpuOpKind::kKernel);
  EXPECT_EQ(tl.strings.view(tl.gpu_ops.name[0]), "scale(float*, int)");  // demangled
  EXPECT_EQ(tl.gpu_ops.grid[0], (std::array<int32_t, 3>{16, 1, 1}));
  EXPECT_EQ(tl.gpu_ops.registers[0], 32);
  EXPECT_EQ(tl.gpu_ops.shared_mem[0], 1024);
  EXPECT_TRUE(std::isnan(tl.gpu_ops.occupancy_pct[0]));
  EXPECT_EQ(tl.gpu_ops.kind[1], GpuOpKind::kMemcpy);
  EXPECT_EQ(tl.gpu_ops.copy_kind[1], CopyKind::kHtoD);
  EXPECT_EQ(tl.gpu_ops.src_kind[1], MemKind::kPageable);
  EXPECT_EQ(tl.gpu_ops.dst_kind[1], MemKind::kDevice);
  EXPECT_EQ(tl.gpu_ops.bytes[1], 1 << 20);
  EXPECT_EQ(tl.strings.view(tl.gpu_ops.name[1]), "Memcpy HtoD (Pageable -> Device)");
  // The kernel links to its launch by correlation id.
  ASSERT_EQ(tl.runtime_calls.size(), 3u);
  EXPECT_EQ(tl.runtime_calls.correlation[0], tl.gpu_ops.correlation[0]);
  EXPECT_EQ(tl.strings.view(tl.runtime_calls.name[0]), "cudaLaunchKernel_v7000");
  EXPECT_EQ(tl.runtime_calls.tid[0], 4243);
  EXPECT_EQ(tl.runtime_calls.pid[0], 4242);
  // The sync names its thread through the runtime call with its correlation.
  ASSERT_EQ(tl.sync_events.size(), 1u);
  EXPECT_EQ(tl.sync_events.kind[0], SyncKind::kStreamSync);
  EXPECT_EQ(tl.sync_events.tid[0], 4243);
  ASSERT_EQ(tl.devices.size(), 1u);
  EXPECT_EQ(tl.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(tl.devices[0].num_sms, 132);
  EXPECT_EQ(tl.devices[0].cc_major, 9);
  EXPECT_EQ(tl.devices[0].cc_minor, 0);
  EXPECT_EQ(stats.count("cupti_dropped_records"), 5);
  EXPECT_EQ(stats.count("cupti_truncated"), 0);
}

// A stream wait's synchronization record and the CUDA_EVENT record of the event it waited
// on share a cudaEventSyncId; the wait takes the event's stream and record call. The event
// record comes after the wait in the file (CUPTI hands buffers of different streams over
// in no set order); a wait whose id has no record, and the ids CUPTI writes for "none",
// stay unknown.
TEST(CuptiImporter, AStreamWaitTakesTheStreamAndCallOfItsEventsRecord) {
  std::string error;
  const int64_t pid = 5151;
  std::filesystem::remove(tracer::trace_file_path(dir(), pid));
  auto w = tracer::TraceWriter::create(dir(), header(pid, 0, 0), &error);
  ASSERT_TRUE(w) << error;
  auto wait = [&](uint64_t start, uint32_t stream, uint64_t sync_id) {
    Record s{};
    s.kind = static_cast<uint8_t>(RecordKind::kSync);
    s.sub = 2;  // stream wait event
    s.start = start;
    s.end = start + 2;
    s.correlation = static_cast<uint32_t>(start);
    s.stream = stream;
    s.event.sync_id = sync_id;
    s.event.event_id = 3;
    w->add(s);
  };
  wait(2000, 9, 77);
  wait(2100, 9, 78);           // its record is not in the file
  wait(2200, 9, 0xFFFFFFFFu);  // CUPTI's "none"
  Record e{};
  e.kind = static_cast<uint8_t>(RecordKind::kEvent);
  e.correlation = 41;
  e.stream = 7;
  e.event.sync_id = 77;
  e.event.event_id = 3;
  w->add(e);
  ASSERT_TRUE(w->finish(0));
  std::ifstream in(w->path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  timeline::Timeline tl;
  tl.sources.emplace_back().path = "trace-5151.cptrace";
  timeline::ImportStats stats;
  ASSERT_TRUE(import_cupti_buffer(bytes, 0, tl, stats).ok());
  const auto& se = tl.sync_events;
  ASSERT_EQ(se.size(), 3u);
  EXPECT_EQ(se.kind[0], SyncKind::kStreamWaitEvent);
  EXPECT_EQ(se.stream[0], 9);
  EXPECT_EQ(se.event_stream[0], 7);
  // The record call's correlation, offset as every id of this source is.
  EXPECT_EQ(se.event_correlation[0] - se.correlation[0], 41 - 2000);
  EXPECT_EQ(se.event_stream[1], -1);
  EXPECT_EQ(se.event_correlation[1], -1);
  EXPECT_EQ(se.event_stream[2], -1);
  EXPECT_EQ(stats.count("cupti_unknown_records"), 0);
}

TEST(CuptiImporter, ClockPairMovesCuptiTimeOntoTheSamplerClock) {
  // CUPTI on its own clock (1000 ns at realtime 5 s): every time moves by the difference.
  const std::string bytes = write_trace(4243, 5'000'000'000 + 1000, 1000, true);
  timeline::Timeline tl;
  tl.sources.emplace_back().path = "t";
  timeline::ImportStats stats;
  ASSERT_TRUE(import_cupti_buffer(bytes, 0, tl, stats).ok());
  EXPECT_EQ(tl.gpu_ops.start[0], 5'000'000'000 + 1010);
  EXPECT_EQ(tl.runtime_calls.start[0], 5'000'000'000 + 1000);
  // Already on the same clock (the Linux default): nothing moves.
  const std::string same = write_trace(4244, 1000 + 3, 1000, true);
  timeline::Timeline tl2;
  tl2.sources.emplace_back().path = "t";
  ASSERT_TRUE(import_cupti_buffer(same, 0, tl2, stats).ok());
  EXPECT_EQ(tl2.gpu_ops.start[0], 1010);
}

TEST(CuptiImporter, AProcessThatDiedEarlyIsReadAndSaidSo) {
  const std::string bytes = write_trace(4245, 0, 0, false);
  timeline::Timeline tl;
  tl.sources.emplace_back().path = "t";
  timeline::ImportStats stats;
  ASSERT_TRUE(import_cupti_buffer(bytes, 0, tl, stats).ok());
  EXPECT_EQ(tl.gpu_ops.size(), 2u);
  EXPECT_EQ(stats.count("cupti_truncated"), 1);
  // Cut mid-string: what came before is kept.
  timeline::Timeline tl3;
  tl3.sources.emplace_back().path = "t";
  ASSERT_TRUE(import_cupti_buffer(bytes.substr(0, 64 + 64 + 16), 0, tl3, stats).ok());
  EXPECT_GE(stats.count("cupti_bad_string"), 1);
}

TEST(CuptiImporter, RejectsOtherFiles) {
  timeline::Timeline tl;
  tl.sources.emplace_back().path = "t";
  timeline::ImportStats stats;
  EXPECT_FALSE(import_cupti_buffer("{\"traceEvents\":[]}", 0, tl, stats).ok());
  EXPECT_FALSE(sniff_cupti("CPTRACE"));
}

}  // namespace
}  // namespace chokepoint::importers

namespace chokepoint::importers {
namespace {

Record marker(uint8_t sub, uint32_t id, uint64_t t, uint32_t name, uint32_t tid) {
  Record m{};
  m.kind = static_cast<uint8_t>(RecordKind::kMarker);
  m.sub = sub;
  m.correlation = id;
  m.start = t;
  m.name = name;
  m.stream = tid;
  m.marker.pid = 77;
  return m;
}

// NVTX ranges: pairs of start/end records become user annotations; the outer ones named
// like an iteration become steps; an end without its start and a start without its end
// are counted, not imported.
TEST(CuptiImporter, NvtxRangesAndSteps) {
  std::string error;
  std::filesystem::remove(tracer::trace_file_path(dir(), 77));
  auto w = tracer::TraceWriter::create(dir(), header(77, 0, 0), &error);
  ASSERT_TRUE(w) << error;
  const uint32_t step = w->intern("train_step 4"), fwd = w->intern("forward"), inner = w->intern("step");
  w->add(marker(tracer::kMarkerEnd, 1, 500, 0, 10));  // opened before CUDA init
  w->add(marker(tracer::kMarkerStart, 2, 1000, step, 10));
  w->add(marker(tracer::kMarkerStart, 3, 1100, fwd, 10));
  w->add(marker(tracer::kMarkerStart, 4, 1200, inner, 10));  // a step inside the step
  w->add(marker(tracer::kMarkerEnd, 4, 1300, 0, 10));
  w->add(marker(tracer::kMarkerEnd, 3, 1400, 0, 10));
  w->add(marker(tracer::kMarkerEnd, 2, 2000, 0, 10));
  w->add(marker(tracer::kMarkerInstant, 5, 2100, fwd, 10));
  w->add(marker(tracer::kMarkerStart, 6, 2200, step, 10));  // never closed
  ASSERT_TRUE(w->finish(0));
  std::ifstream in(w->path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});

  timeline::Timeline tl;
  tl.sources.emplace_back().path = "trace-77.cptrace";
  timeline::ImportStats stats;
  ASSERT_TRUE(import_cupti_buffer(bytes, 0, tl, stats).ok());
  ASSERT_EQ(tl.cpu_ranges.size(), 3u);
  tl.finalize();
  EXPECT_EQ(tl.strings.view(tl.cpu_ranges.name[0]), "train_step 4");
  EXPECT_EQ(tl.cpu_ranges.start[0], 1000);
  EXPECT_EQ(tl.cpu_ranges.end[0], 2000);
  EXPECT_EQ(tl.cpu_ranges.pid[0], 77);
  EXPECT_EQ(tl.cpu_ranges.tid[0], 10);
  EXPECT_EQ(tl.cpu_ranges.category[0], timeline::CpuCategory::kUserAnnotation);
  ASSERT_EQ(tl.steps.size(), 1u);
  EXPECT_EQ(tl.steps.number[0], 4);
  EXPECT_EQ(tl.steps.start[0], 1000);
  EXPECT_EQ(tl.steps.end[0], 2000);
  EXPECT_EQ(tl.steps.how[0], timeline::StepSource::kNvtx);
  EXPECT_EQ(stats.count("cupti_nvtx_unmatched"), 1);
  EXPECT_EQ(stats.count("cupti_nvtx_unclosed"), 1);
}

TEST(StepRanges, NamesOfIterations) {
  int64_t n = 0;
  EXPECT_TRUE(step_range_number("step", &n));
  EXPECT_EQ(n, -1);
  EXPECT_TRUE(step_range_number("Step 12", &n));
  EXPECT_EQ(n, 12);
  EXPECT_TRUE(step_range_number("train_step#3", &n));
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(step_range_number("training step", &n));
  EXPECT_TRUE(step_range_number("Iteration 7", &n));
  EXPECT_EQ(n, 7);
  EXPECT_TRUE(step_range_number("iter_2", &n));
  EXPECT_TRUE(step_range_number("ProfilerStep#5", &n));
  EXPECT_EQ(n, 5);
  EXPECT_FALSE(step_range_number("Optimizer.step#SGD.step", &n));
  EXPECT_FALSE(step_range_number("steps", &n));
  EXPECT_FALSE(step_range_number("step_fn", &n));
  EXPECT_FALSE(step_range_number("forward", &n));
  EXPECT_FALSE(step_range_number("iterator", &n));
  EXPECT_FALSE(step_range_number("", &n));
}

}  // namespace
}  // namespace chokepoint::importers

namespace chokepoint::importers {
namespace {

// A trace kept gzipped (tests/data, or a user saving space) reads like the plain file.
TEST(CuptiImporter, ReadsGzippedTrace) {
  const std::string bytes = write_trace(4244, 0, 0, true);
  const std::string d = dir() + "/gz";
  std::filesystem::create_directories(d);
  const std::string path = d + "/trace-4244.cptrace.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
  timeline::Timeline tl;
  timeline::ImportStats stats;
  ASSERT_TRUE(import_paths({d}, tl, stats).ok());
  EXPECT_EQ(tl.gpu_ops.size(), 2u);
  EXPECT_EQ(tl.runtime_calls.size(), 3u);
  EXPECT_EQ(tl.sources.at(0).format, "cupti");
  EXPECT_EQ(stats.count("cupti_truncated"), 0);
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace chokepoint::importers

namespace chokepoint::importers {
namespace {

// Damaged records (found by fuzz/cupti_fuzzer) are counted and kept out of the sums the
// analyses make: a time far from the header's, a kernel longer than a day, a grid beyond
// CUDA's limits, a copy of more than 256 TiB.
TEST(CuptiImporter, DamagedRecordsAreCountedNotImported) {
  const int64_t t0 = 1'700'000'000'000'000'000;
  std::string error;
  std::filesystem::remove(tracer::trace_file_path(dir(), 78));
  auto w = tracer::TraceWriter::create(dir(), header(78, t0, t0), &error);
  ASSERT_TRUE(w) << error;
  Record k{};
  k.kind = static_cast<uint8_t>(RecordKind::kKernel);
  k.name = w->intern("k");
  k.kernel.grid[0] = k.kernel.grid[1] = k.kernel.grid[2] = 1;
  k.kernel.block[0] = k.kernel.block[1] = k.kernel.block[2] = 1;
  Record before = k;  // a day before the process started
  before.start = static_cast<uint64_t>(t0 - 86'400'000'000'000);
  before.end = before.start + 10;
  w->add(before);
  Record long_one = k;  // two days long
  long_one.start = static_cast<uint64_t>(t0 + 10);
  long_one.end = long_one.start + 2 * 86'400'000'000'000;
  w->add(long_one);
  Record huge_grid = k;
  huge_grid.start = static_cast<uint64_t>(t0 + 20);
  huge_grid.end = huge_grid.start + 10;
  huge_grid.kernel.grid[1] = 1 << 30;
  w->add(huge_grid);
  Record copy{};
  copy.kind = static_cast<uint8_t>(RecordKind::kMemcpy);
  copy.sub = 1;
  copy.start = static_cast<uint64_t>(t0 + 30);
  copy.end = copy.start + 10;
  copy.copy.bytes = uint64_t{1} << 60;
  w->add(copy);
  ASSERT_TRUE(w->finish(0));
  std::ifstream in(w->path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});

  timeline::Timeline tl;
  tl.sources.emplace_back().path = "t";
  timeline::ImportStats stats;
  ASSERT_TRUE(import_cupti_buffer(bytes, 0, tl, stats).ok());
  ASSERT_EQ(tl.gpu_ops.size(), 2u);  // the huge grid and the huge copy, sizes unknown
  EXPECT_EQ(stats.count("cupti_bad_times"), 2);
  EXPECT_EQ(stats.count("cupti_bad_kernel_dims"), 1);
  EXPECT_EQ(stats.count("cupti_bad_copy_sizes"), 1);
  EXPECT_EQ(tl.gpu_ops.grid[0], (std::array<int32_t, 3>{0, 0, 0}));
  EXPECT_EQ(tl.gpu_ops.bytes[1], 0);
}

}  // namespace
}  // namespace chokepoint::importers

namespace chokepoint::importers {
namespace {

// A window's file (run --trace-steps ...): its own name, said in the stats, and a window
// the process exited inside is marked cut.
TEST(CuptiImporter, WindowFilesAreNamedAndACutWindowIsSaid) {
  std::string error;
  for (const bool cut : {false, true}) {
    tracer::FileHeader h = header(88, 0, 0);
    h.window = cut ? 3 : 2;
    const std::string path = tracer::trace_file_path(dir(), 88, h.window);
    EXPECT_EQ(path, dir() + (cut ? "/trace-88-w3.cptrace" : "/trace-88-w2.cptrace"));
    std::filesystem::remove(path);
    auto w = tracer::TraceWriter::create(dir(), h, &error);
    ASSERT_TRUE(w) << error;
    EXPECT_EQ(w->path(), path);
    ASSERT_TRUE(w->finish(0, cut));
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    timeline::Timeline tl;
    tl.sources.emplace_back().path = path;
    timeline::ImportStats stats;
    ASSERT_TRUE(import_cupti_buffer(bytes, 0, tl, stats).ok());
    EXPECT_EQ(stats.count("cupti_window"), 1);
    EXPECT_EQ(stats.count("cupti_window_cut"), cut ? 1 : 0);
    EXPECT_EQ(stats.count("cupti_truncated"), 0);
  }
}

}  // namespace
}  // namespace chokepoint::importers
