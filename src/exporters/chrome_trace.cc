#include "exporters/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/version.h"
#include "exporters/chrome_trace_tracks.h"
#include "exporters/json_text.h"
#include "exporters/trace_event_writer.h"
#include "samples/metric.h"

namespace chokepoint::exporters {
namespace {

using chrome::cpu_category;
using chrome::earliest_time;
using chrome::exported;
using chrome::gpu_op_category;
using chrome::gpu_process_name;
using chrome::has_value;
using chrome::LaunchLinks;
using chrome::sampled_gpu_pids;
using chrome::short_metric_name;
using chrome::sync_name;
using chrome::TrackSet;
using timeline::ApiKind;
using timeline::CopyKind;
using timeline::GpuOpKind;
using timeline::MemKind;
using timeline::Timeline;
using timeline::TimeNs;

class ChromeTrace {
 public:
  ChromeTrace(const Timeline& tl, const samples::Recording* rec, const analyses::StepWindows* steps,
              const ChromeFindingTracks* findings, std::ostream& out)
      : tl_(tl), rec_(rec), steps_(steps), findings_(findings), base_(earliest_time(tl, rec, steps)), w_(out, base_) {}

  ChromeTraceStats write() {
    w_.raw("{\"traceEvents\":[");
    write_gpu_ops();
    write_gpu_annotations();
    write_runtime_calls();
    write_cpu_ranges();
    write_sync_events();
    write_steps();
    write_idle_gaps();
    write_markers();
    write_counters();
    write_names();
    w_.raw("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":");
    append_json_string(w_.buffer(), "chokepoint " CHOKEPOINT_VERSION);
    w_.raw(",\"base_time_ns\":");
    append_json_int(w_.buffer(), base_);
    if (steps_ != nullptr && !steps_->method.empty()) {
      w_.raw(",\"steps\":");
      append_json_string(w_.buffer(), steps_->method);
    }
    w_.raw("}}\n");
    w_.flush();
    stats_.base_time_ns = base_;
    return stats_;
  }
  bool ok() const { return w_.ok(); }

 private:
  int64_t gpu_pid(int16_t device) const { return kChromeGpuPidBase + device; }

  void write_gpu_ops() {
    const auto& g = tl_.gpu_ops;
    for (size_t i = 0; i < g.size(); ++i) {
      const int64_t pid = gpu_pid(g.device[i]);
      tracks_.add(pid, g.stream[i]);
      w_.open('X', gpu_op_category(g.kind[i]), tl_.strings.view(g.name[i]), pid, g.stream[i], g.start[i]);
      w_.dur(g.end[i] - g.start[i]);
      w_.begin_args();
      if (g.device[i] >= 0 && static_cast<size_t>(g.device[i]) < tl_.devices.size()) {
        w_.arg_int("device", tl_.devices[g.device[i]].local_id);
      }
      w_.arg_int("stream", g.stream[i]);
      if (g.correlation[i] >= 0) w_.arg_int("correlation", g.correlation[i]);
      if (g.external_id[i] >= 0) w_.arg_int("External id", g.external_id[i]);
      if (g.kind[i] == GpuOpKind::kKernel) {
        w_.arg_dims("grid", g.grid[i]);
        w_.arg_dims("block", g.block[i]);
        if (g.registers[i] >= 0) w_.arg_int("registers per thread", g.registers[i]);
        if (g.shared_mem[i] >= 0) w_.arg_int("shared memory", g.shared_mem[i]);
        if (std::isfinite(g.occupancy_pct[i])) w_.arg_float("est. achieved occupancy %", g.occupancy_pct[i]);
      } else {
        w_.arg_int("bytes", g.bytes[i]);
        if (g.copy_kind[i] != CopyKind::kUnknown) w_.arg_str("copy kind", timeline::copy_kind_name(g.copy_kind[i]));
        if (g.src_kind[i] != MemKind::kUnknown) w_.arg_str("src kind", timeline::mem_kind_name(g.src_kind[i]));
        if (g.dst_kind[i] != MemKind::kUnknown) w_.arg_str("dst kind", timeline::mem_kind_name(g.dst_kind[i]));
        const TimeNs d = g.end[i] - g.start[i];
        if (d > 0 && g.bytes[i] > 0) {
          w_.arg_double("memory bandwidth (GB/s)", static_cast<double>(g.bytes[i]) / static_cast<double>(d));
        }
      }
      w_.end_args();
      w_.close();
      ++stats_.slices;
      if (links_.launched[i]) {
        // The arrow's head: bound to the op that encloses its timestamp ("bp":"e").
        w_.open('f', "ac2g", "ac2g", pid, g.stream[i], g.start[i]);
        w_.field_int("id", static_cast<int64_t>(i) + 1);
        w_.field_str("bp", "e");
        w_.close();
      }
    }
  }

  void write_gpu_annotations() {
    const auto& a = tl_.gpu_annotations;
    for (size_t i = 0; i < a.size(); ++i) {
      const int64_t pid = gpu_pid(a.device[i]);
      tracks_.add(pid, a.stream[i]);
      w_.open('X', "gpu_user_annotation", tl_.strings.view(a.name[i]), pid, a.stream[i], a.start[i]);
      w_.dur(a.end[i] - a.start[i]);
      w_.close();
      ++stats_.slices;
    }
  }

  void write_runtime_calls() {
    const auto& rc = tl_.runtime_calls;
    for (size_t i = 0; i < rc.size(); ++i) {
      tracks_.add(rc.pid[i], rc.tid[i]);
      w_.open('X', rc.api[i] == ApiKind::kDriver ? "cuda_driver" : "cuda_runtime", tl_.strings.view(rc.name[i]),
              rc.pid[i], rc.tid[i], rc.start[i]);
      w_.dur(rc.end[i] - rc.start[i]);
      w_.begin_args();
      if (rc.correlation[i] >= 0) w_.arg_int("correlation", rc.correlation[i]);
      if (rc.external_id[i] >= 0) w_.arg_int("External id", rc.external_id[i]);
      if (rc.cbid[i] >= 0) w_.arg_int("cbid", rc.cbid[i]);
      w_.end_args();
      w_.close();
      ++stats_.slices;
      // The arrows' tails, one per op launched, right after the call that encloses them;
      // the id is the op's row, unique even where correlation ids repeat (graph launches).
      for (uint32_t k = links_.begin[i]; k < links_.begin[i + 1]; ++k) {
        w_.open('s', "ac2g", "ac2g", rc.pid[i], rc.tid[i], rc.start[i]);
        w_.field_int("id", static_cast<int64_t>(links_.ops[k]) + 1);
        w_.close();
        ++stats_.flows;
      }
    }
  }

  void write_cpu_ranges() {
    const auto& c = tl_.cpu_ranges;
    const auto& in = tl_.op_inputs;
    for (size_t i = 0; i < c.size(); ++i) {
      tracks_.add(c.pid[i], c.tid[i]);
      w_.open('X', cpu_category(c.category[i]), tl_.strings.view(c.name[i]), c.pid[i], c.tid[i], c.start[i]);
      w_.dur(c.end[i] - c.start[i]);
      w_.begin_args();
      if (c.external_id[i] >= 0) w_.arg_int("External id", c.external_id[i]);
      if (c.sequence[i] >= 0) w_.arg_int("Sequence number", c.sequence[i]);
      const uint32_t op = c.inputs[i];
      if (op != timeline::CpuRanges::kNoInputs && op < in.ops()) {
        // record_shapes=True: the same two arrays the PyTorch profiler writes.
        auto& b = w_.buffer();
        w_.arg_raw("Input Dims");
        b += '[';
        for (uint32_t j = 0; j < in.num_inputs(op); ++j) {
          if (j > 0) b += ',';
          b += '[';
          for (uint32_t d = 0; d < in.rank(op, j); ++d) {
            if (d > 0) b += ',';
            append_json_int(b, in.dim(op, j, d));
          }
          b += ']';
        }
        b += ']';
        w_.arg_raw("Input type");
        b += '[';
        for (uint32_t j = 0; j < in.num_inputs(op); ++j) {
          if (j > 0) b += ',';
          append_json_string(b, tl_.strings.view(in.input_type(op, j)));
        }
        b += ']';
      }
      w_.end_args();
      w_.close();
      ++stats_.slices;
    }
  }

  // On the thread that blocked; a record no thread could be found for goes on the GPU
  // stream it waited for (where Kineto puts them all).
  void write_sync_events() {
    const auto& s = tl_.sync_events;
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t pid = s.pid[i], tid = s.tid[i];
      if (pid < 0) {
        if (s.device[i] < 0) {
          ++stats_.unplaced;
          continue;
        }
        pid = gpu_pid(s.device[i]);
        tid = s.stream[i];
      }
      tracks_.add(pid, tid);
      w_.open('X', "cuda_sync", sync_name(s.kind[i]), pid, tid, s.start[i]);
      w_.dur(s.end[i] - s.start[i]);
      w_.begin_args();
      if (s.correlation[i] >= 0) w_.arg_int("correlation", s.correlation[i]);
      if (s.device[i] >= 0 && static_cast<size_t>(s.device[i]) < tl_.devices.size()) {
        w_.arg_int("device", tl_.devices[s.device[i]].local_id);
      }
      if (s.stream[i] >= 0) w_.arg_int("stream", s.stream[i]);
      w_.end_args();
      w_.close();
      ++stats_.slices;
    }
  }

  // One thread of the Steps process per process that ran steps: windows of different
  // ranks overlap in time and would not nest on one track. A whole-trace window says
  // nothing the timeline does not, so it is left out.
  void write_steps() {
    if (steps_ == nullptr || steps_->whole_trace) return;
    for (const auto& s : steps_->steps) {
      const int64_t tid = std::max<int64_t>(s.pid, 0);
      tracks_.add(kChromeStepsPid, tid);
      w_.open('X', "step", "step " + std::to_string(s.number), kChromeStepsPid, tid, s.start);
      w_.dur(s.end - s.start);
      w_.begin_args();
      w_.arg_int("step", s.number);
      w_.arg_str("method", steps_->method);
      if (s.pid >= 0) w_.arg_int("pid", s.pid);
      if (s.tid >= 0) w_.arg_int("tid", s.tid);
      w_.end_args();
      w_.close();
      ++stats_.slices;
    }
  }

  // Idle gaps lie between a device's ops (breakdown.h): disjoint, so they nest on one thread.
  void write_idle_gaps() {
    if (findings_ == nullptr) return;
    for (const analyses::IdleGap& g : findings_->idle) {
      const int64_t pid = gpu_pid(static_cast<int16_t>(g.device));
      tracks_.add(pid, kChromeIdleTid);
      w_.open('X', "idle", analyses::idle_cause_name(g.cause), pid, kChromeIdleTid, g.start);
      w_.dur(g.end - g.start);
      w_.begin_args();
      w_.arg_str("cause", analyses::idle_cause_name(g.cause));
      if (steps_ != nullptr && g.step >= 0 && static_cast<size_t>(g.step) < steps_->steps.size()) {
        w_.arg_int("step", steps_->steps[static_cast<size_t>(g.step)].number);
      }
      w_.end_args();
      w_.close();
      ++stats_.slices;
      ++stats_.idle_gaps;
    }
  }

  void write_markers() {
    if (findings_ == nullptr) return;
    for (const ChromeMarker& m : findings_->markers) {
      const int64_t pid = gpu_pid(static_cast<int16_t>(m.device));
      tracks_.add(pid, kChromeFindingsTid);
      w_.open('i', "finding", m.finding, pid, kChromeFindingsTid, m.ts);
      w_.field_str("s", "t");
      w_.begin_args();
      w_.arg_str("title", m.title);
      w_.arg_str("severity", m.severity);
      w_.arg_str("instance", m.what);
      w_.arg_double("instance_ms", static_cast<double>(m.span_ns) / 1e6);
      w_.end_args();
      w_.close();
      ++stats_.markers;
    }
  }

  void write_counters() {
    if (rec_ == nullptr) return;
    gpu_sample_pid_ = sampled_gpu_pids(tl_, *rec_);
    for (const auto& s : rec_->samples.series()) {
      if (!exported(s)) continue;
      const samples::MetricInfo& m = samples::metric_info(s.metric);
      std::string name;
      int64_t pid = 0;
      switch (s.entity.kind) {
        case samples::EntityKind::kGpu:
          name = "gpu" + std::to_string(s.entity.id);
          pid = gpu_sample_pid_.at(s.entity.id);
          break;
        case samples::EntityKind::kHost:
          name = "host";
          pid = kChromeHostPid;
          break;
        case samples::EntityKind::kProcess:
          name = "proc";
          pid = s.entity.id;
          break;
        case samples::EntityKind::kThread:
          name = "thread " + std::to_string(s.entity.id);
          pid = s.entity.pid;
          break;
      }
      name += ' ';
      name += short_metric_name(m.name);
      bool any = false;
      for (size_t i = 0; i < s.size(); ++i) {
        if (!has_value(s, i)) {
          ++stats_.invalid_samples;
          continue;
        }
        any = true;
        // The value's key is the unit: Perfetto names the track "<name> <key>".
        w_.open('C', {}, name, pid, 0, s.time_ns[i], /*with_tid=*/false);
        w_.begin_args();
        w_.arg_double(m.unit, s.values[i]);
        w_.end_args();
        w_.close();
        ++stats_.counters;
      }
      if (any) tracks_.add_process(pid);
    }
  }

  void name_process(int64_t pid, std::string_view name) {
    w_.open('M', {}, "process_name", pid, 0, base_, /*with_tid=*/false);
    w_.begin_args();
    w_.arg_str("name", name);
    w_.end_args();
    w_.close();
    ++stats_.metadata;
  }
  void name_thread(int64_t pid, int64_t tid, std::string_view name) {
    w_.open('M', {}, "thread_name", pid, tid, base_);
    w_.begin_args();
    w_.arg_str("name", name);
    w_.end_args();
    w_.close();
    ++stats_.metadata;
  }

  void write_names() {
    name_real_processes();
    name_traced_gpus();
    name_sampled_gpus();
    name_host_and_steps();
  }

  // Real processes: the recording knows their command, role and rank; a trace at least
  // the name the profiler gave.
  void name_real_processes() {
    std::unordered_map<int64_t, std::string> process_names;
    for (const auto& n : tl_.thread_names) {
      if (n.tid == -1) process_names[n.pid] = n.name;
    }
    if (rec_ != nullptr) {
      for (const auto& p : rec_->meta.processes) {
        std::string name = p.comm.empty() ? "pid " + std::to_string(p.pid) : p.comm;
        name += " (" + std::string(samples::role_name(p.role));
        if (p.rank) name += ", rank " + std::to_string(*p.rank);
        name += ")";
        process_names[p.pid] = std::move(name);
      }
    }
    for (const int64_t pid : tracks_.pids()) {
      const auto it = process_names.find(pid);
      if (it != process_names.end()) name_process(pid, it->second);
    }
    for (const auto& n : tl_.thread_names) {
      if (n.tid != -1 && tracks_.has_thread(n.pid, n.tid)) name_thread(n.pid, n.tid, n.name);
    }
  }

  // GPUs of the timeline: one process each, a thread per stream.
  void name_traced_gpus() {
    const bool many_sources = tl_.sources.size() > 1;
    for (size_t d = 0; d < tl_.devices.size(); ++d) {
      const int64_t pid = gpu_pid(static_cast<int16_t>(d));
      if (!tracks_.has_process(pid)) continue;
      const timeline::Device& dev = tl_.devices[d];
      std::string name = gpu_process_name(dev.local_id, dev.name);
      if (many_sources && static_cast<size_t>(dev.source_index) < tl_.sources.size()) {
        const timeline::Source& src = tl_.sources[dev.source_index];
        // The rank, else the file's name (trace-<pid>.cptrace names its process).
        // (Appended piece by piece: GCC 12 warns wrongly on `" rank " + std::to_string(..)` here, -Wrestrict.)
        name += src.rank >= 0 ? " rank " : " ";
        name += src.rank >= 0 ? std::to_string(src.rank) : src.path.substr(src.path.find_last_of('/') + 1);
      }
      name_process(pid, name);
    }
    for (const auto& [pid, tid] : tracks_.threads()) {
      if (pid < kChromeGpuPidBase || pid >= kChromeSampledGpuPidBase) continue;
      if (tid == kChromeIdleTid) {
        name_thread(pid, tid, "idle by cause (chokepoint)");
      } else if (tid == kChromeFindingsTid) {
        name_thread(pid, tid, "findings (chokepoint)");
      } else {
        name_thread(pid, tid, "stream " + std::to_string(tid));
      }
    }
  }

  // GPUs known only from the samples.
  void name_sampled_gpus() {
    std::map<int64_t, std::string> gpu_meta_name;
    if (rec_ != nullptr) {
      for (const auto& g : rec_->meta.gpus) gpu_meta_name[g.index] = g.name;
    }
    for (const auto& [index, pid] : gpu_sample_pid_) {
      if (pid >= kChromeSampledGpuPidBase && tracks_.has_process(pid)) {
        // Beside traced GPUs, say which of the two this one is.
        name_process(pid, gpu_process_name(index, gpu_meta_name[index]) + (tl_.devices.empty() ? "" : " samples"));
      }
    }
  }

  // The host, the steps.
  void name_host_and_steps() {
    if (tracks_.has_process(kChromeHostPid)) {
      std::string name = "Host";
      if (rec_ != nullptr) {
        const auto h = rec_->meta.host.find("hostname");
        if (h != rec_->meta.host.end() && !h->second.empty()) name += " (" + h->second + ")";
      }
      name_process(kChromeHostPid, name);
    }
    if (tracks_.has_process(kChromeStepsPid)) {
      name_process(kChromeStepsPid, "Steps");
      std::set<int64_t> tids;
      for (const auto& s : steps_->steps) tids.insert(std::max<int64_t>(s.pid, 0));
      for (const int64_t tid : tids) {
        name_thread(kChromeStepsPid, tid, tid > 0 ? "steps of pid " + std::to_string(tid) : "steps");
      }
    }
  }

  const Timeline& tl_;
  const samples::Recording* rec_;
  const analyses::StepWindows* steps_;
  const ChromeFindingTracks* findings_;
  const TimeNs base_;
  TraceEventWriter w_;
  const LaunchLinks links_ = LaunchLinks::build(tl_);
  TrackSet tracks_;
  std::map<int64_t, int64_t> gpu_sample_pid_;
  ChromeTraceStats stats_;
};

}  // namespace

Status write_chrome_trace(const timeline::Timeline& tl, const samples::Recording* rec,
                          const analyses::StepWindows* steps, std::ostream& out, ChromeTraceStats* stats,
                          const ChromeFindingTracks* findings) {
  ChromeTrace trace(tl, rec, steps, findings, out);
  const ChromeTraceStats s = trace.write();
  if (!trace.ok()) return Status::Error("writing the trace failed");
  if (stats != nullptr) *stats = s;
  return Status::Ok();
}

}  // namespace chokepoint::exporters
