// Test helper: builds small synthetic timelines (times in microseconds for readability)
// for unit tests of analyses and rules. Header-only; used by *_test.cc files only.
#pragma once

#include <string>

#include "timeline/model.h"

namespace chokepoint::testing {

class TimelineBuilder {
 public:
  static constexpr int32_t kPid = 100, kTid = 100;

  TimelineBuilder() {
    tl_.sources.emplace_back();
    tl_.sources.back().path = "synthetic";
    tl_.sources.back().format = "test";
    timeline::Device d;
    d.name = "NVIDIA H200";
    d.num_sms = 132;
    d.cc_major = 9;
    d.cc_minor = 0;
    d.local_id = 0;
    tl_.devices.push_back(d);
  }

  static timeline::TimeNs us(double v) { return static_cast<timeline::TimeNs>(v * 1000.0); }

  // A kernel on device 0 launched by a runtime call `api` on the main thread at `launch_us`
  // (lasting `api_us`), running [start_us, start_us + dur_us). Returns its correlation id.
  // A negative launch_us records no launch (work queued before the trace began).
  int64_t kernel(const std::string& name, double launch_us, double start_us, double dur_us, int32_t blocks = 1024,
                 const std::string& api = "cudaLaunchKernel", double api_us = 3, int64_t external_id = -1,
                 int32_t stream = 7) {
    const int64_t corr = next_corr_++;
    if (launch_us >= 0) runtime(api, launch_us, api_us, corr, external_id);
    kernel_row(name, corr, start_us, dur_us, blocks, external_id, stream);
    return corr;
  }

  // A kernel of a CUDA Graph: it shares the correlation id `corr` of the cudaGraphLaunch
  // call that launched it (add that call with runtime()).
  void graph_node(const std::string& name, int64_t corr, double start_us, double dur_us, int32_t stream = 7) {
    kernel_row(name, corr, start_us, dur_us, 1, -1, stream);
  }

  // A memcpy launched by cudaMemcpyAsync at launch_us, the call lasting api_us (a pageable
  // copy's call returns when the copy is nearly done).
  void memcpy(timeline::CopyKind kind, timeline::MemKind src, timeline::MemKind dst, int64_t bytes, double launch_us,
              double start_us, double dur_us, double api_us = 2) {
    const int64_t corr = next_corr_++;
    runtime("cudaMemcpyAsync", launch_us, api_us, corr, -1);
    auto& g = tl_.gpu_ops;
    g.kind.push_back(timeline::GpuOpKind::kMemcpy);
    g.device.push_back(0);
    g.stream.push_back(7);
    g.start.push_back(us(start_us));
    g.end.push_back(us(start_us + dur_us));
    g.name.push_back(tl_.strings.intern("Memcpy"));
    g.correlation.push_back(corr);
    g.external_id.push_back(-1);
    g.grid.push_back({0, 0, 0});
    g.block.push_back({0, 0, 0});
    g.registers.push_back(-1);
    g.shared_mem.push_back(-1);
    g.occupancy_pct.push_back(timeline::kUnknownF);
    g.bytes.push_back(bytes);
    g.copy_kind.push_back(kind);
    g.src_kind.push_back(src);
    g.dst_kind.push_back(dst);
  }

  void runtime(const std::string& name, double start_us, double dur_us, int64_t corr = -1, int64_t external_id = -1) {
    auto& r = tl_.runtime_calls;
    r.pid.push_back(kPid);
    r.tid.push_back(kTid);
    r.api.push_back(name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0 ? timeline::ApiKind::kDriver
                                                                           : timeline::ApiKind::kRuntime);
    r.name.push_back(tl_.strings.intern(name));
    r.start.push_back(us(start_us));
    r.end.push_back(us(start_us + dur_us));
    r.correlation.push_back(corr);
    r.external_id.push_back(external_id);
    r.cbid.push_back(-1);
  }

  // A CPU range on the main thread; returns its row.
  size_t cpu(const std::string& name, double start_us, double dur_us,
             timeline::CpuCategory cat = timeline::CpuCategory::kOp, int64_t external_id = -1) {
    auto& c = tl_.cpu_ranges;
    c.pid.push_back(kPid);
    c.tid.push_back(kTid);
    c.category.push_back(cat);
    c.name.push_back(tl_.strings.intern(name));
    c.start.push_back(us(start_us));
    c.end.push_back(us(start_us + dur_us));
    c.external_id.push_back(external_id);
    c.sequence.push_back(-1);
    c.inputs.push_back(timeline::CpuRanges::kNoInputs);
    return c.size() - 1;
  }

  // An ATen op with input types and dims (record_shapes).
  void op_with_inputs(const std::string& name, double start_us, double dur_us, int64_t external_id,
                      const std::vector<std::pair<std::string, std::vector<int64_t>>>& inputs) {
    const size_t row = cpu(name, start_us, dur_us, timeline::CpuCategory::kOp, external_id);
    auto& oi = tl_.op_inputs;
    const uint32_t op = oi.begin_op();
    for (const auto& [type, dims] : inputs) {
      oi.add_input(tl_.strings.intern(type), dims.data(), static_cast<uint32_t>(dims.size()));
    }
    oi.end_op();
    tl_.cpu_ranges.inputs[row] = op;
  }

  // The synchronization record CUPTI writes for a cudaStreamWaitEvent on `stream` (a CUPTI
  // trace of `run --trace` has it without the API call); with `event_stream` >= 0, the
  // event it waited on, recorded on that stream by the call of `event_correlation` (the
  // CUDA_EVENT record the tracer keeps since 2026-12-05).
  void stream_wait(double start_us, int32_t stream, double dur_us = 1, int32_t event_stream = -1,
                   int64_t event_correlation = -1) {
    auto& s = tl_.sync_events;
    s.pid.push_back(kPid);
    s.tid.push_back(-1);
    s.device.push_back(-1);
    s.stream.push_back(stream);
    s.kind.push_back(timeline::SyncKind::kStreamWaitEvent);
    s.start.push_back(us(start_us));
    s.end.push_back(us(start_us + dur_us));
    s.correlation.push_back(next_corr_++);
    s.event_stream.push_back(event_stream);
    s.event_correlation.push_back(event_correlation);
  }

  void step(int64_t number, double start_us, double dur_us) {
    cpu("ProfilerStep#" + std::to_string(number), start_us, dur_us, timeline::CpuCategory::kUserAnnotation);
    auto& s = tl_.steps;
    s.number.push_back(number);
    s.source_index.push_back(0);
    s.pid.push_back(kPid);
    s.tid.push_back(kTid);
    s.start.push_back(us(start_us));
    s.end.push_back(us(start_us + dur_us));
    s.how.push_back(timeline::StepSource::kProfilerStep);
  }

  timeline::Timeline& finish() {
    tl_.finalize();
    return tl_;
  }

 private:
  void kernel_row(const std::string& name, int64_t corr, double start_us, double dur_us, int32_t blocks,
                  int64_t external_id, int32_t stream) {
    auto& g = tl_.gpu_ops;
    g.kind.push_back(timeline::GpuOpKind::kKernel);
    g.device.push_back(0);
    g.stream.push_back(stream);
    g.start.push_back(us(start_us));
    g.end.push_back(us(start_us + dur_us));
    g.name.push_back(tl_.strings.intern(name));
    g.correlation.push_back(corr);
    g.external_id.push_back(external_id);
    g.grid.push_back({blocks, 1, 1});
    g.block.push_back({256, 1, 1});
    g.registers.push_back(32);
    g.shared_mem.push_back(0);
    g.occupancy_pct.push_back(timeline::kUnknownF);
    g.bytes.push_back(0);
    g.copy_kind.push_back(timeline::CopyKind::kUnknown);
    g.src_kind.push_back(timeline::MemKind::kUnknown);
    g.dst_kind.push_back(timeline::MemKind::kUnknown);
  }

  timeline::Timeline tl_;
  int64_t next_corr_ = 1;
};

}  // namespace chokepoint::testing
