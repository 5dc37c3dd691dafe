#include "pipeline/kernels_pipeline.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <unordered_map>

#include "analyses/analysis.h"
#include "base/read_file.h"
#include "importers/input/byte_source.h"
#include "importers/ncu/ncu_csv.h"
#include "pipeline/inputs.h"

namespace chokepoint::pipeline {

using analyses::KernelPoint;
using analyses::KernelsView;

bool is_ncu_csv(const std::string& path) {
  if (!is_regular_file_path(path)) return false;
  auto head = importers::read_head(path, 1 << 16);
  return head.ok() && importers::looks_like_ncu_csv(head.value());
}

namespace {

machine::Ceilings ceilings_of(const timeline::KernelMetrics& k, const CeilingsOptions& o, Status* s) {
  machine::DeviceSpec d;
  d.name = k.device;
  d.num_sms = k.num_sms;
  d.cc_major = k.cc_major;
  d.cc_minor = k.cc_minor;
  auto ctx = resolve_machine_context({d}, o);
  if (!ctx.ok()) {
    *s = ctx.status();
    return {};
  }
  return ctx.value().devices.front();
}

bool more_time(const KernelPoint& a, const KernelPoint& b) { return a.ns > b.ns; }

}  // namespace

Result<KernelsView> kernels_from_ncu(const timeline::KernelMetricsFile& f, const std::vector<std::string>& inputs,
                                     const KernelsOptions& o) {
  if (f.kernels.empty()) return Status::Error(ErrorCode::kInput, "no profiled launch in the ncu export");
  KernelsView v;
  v.inputs = inputs;
  v.measured = true;
  Status s;
  v.ceilings = ceilings_of(f.kernels.front(), o.ceilings, &s);
  if (!s.ok()) return s;
  // Launches grouped by kernel, in the order first seen.
  std::map<std::string, std::vector<size_t>> groups;
  std::vector<std::string> order;
  for (size_t i = 0; i < f.kernels.size(); ++i) {
    auto [it, fresh] = groups.try_emplace(f.kernels[i].name);
    if (fresh) order.push_back(f.kernels[i].name);
    it->second.push_back(i);
    v.kernel_ns += f.kernels[i].duration_ns.value_or(0);
  }
  for (const std::string& name : order) {
    std::vector<size_t> g = groups[name];
    std::sort(g.begin(), g.end(), [&](size_t a, size_t b) {
      return f.kernels[a].duration_ns.value_or(0) < f.kernels[b].duration_ns.value_or(0);
    });
    KernelPoint p = analyses::point_from_ncu(f.kernels[g[g.size() / 2]], v.ceilings);
    p.calls = static_cast<int64_t>(g.size());
    p.ns = 0;
    for (size_t i : g) p.ns += f.kernels[i].duration_ns.value_or(0);
    if (v.kernel_ns > 0) p.time_pct = 100 * p.ns / v.kernel_ns;
    v.kernels.push_back(std::move(p));
  }
  std::stable_sort(v.kernels.begin(), v.kernels.end(), more_time);
  v.kernels_total = v.kernels.size();
  if (o.top > 0 && v.kernels.size() > o.top) v.kernels.resize(o.top);
  if (groups.size() < f.kernels.size()) {
    v.notes.push_back(
        "kernels launched more than once: the figures of each one's median-length launch, the time of "
        "all its launches");
  }
  for (const std::string& m : f.messages) {
    if (m.find("==ERROR==") == 0) v.notes.push_back("ncu: " + m);
  }
  return v;
}

Result<KernelsView> kernels_from_paths(const std::vector<std::string>& paths, const KernelsOptions& o) {
  const size_t ncu = static_cast<size_t>(std::count_if(paths.begin(), paths.end(), is_ncu_csv));
  if (ncu > 0 && ncu < paths.size()) {
    return Status::Error(ErrorCode::kUsage, "give either ncu CSV exports or traces, not both");
  }
  if (ncu > 0) {
    timeline::KernelMetricsFile all;
    for (const std::string& p : paths) {
      auto f = importers::read_ncu_csv(p);
      if (!f.ok()) return f.status();
      for (auto& k : f.value().kernels) all.kernels.push_back(std::move(k));
      for (auto& m : f.value().messages) all.messages.push_back(std::move(m));
    }
    return kernels_from_ncu(all, paths, o);
  }
  auto in = load_inputs(paths);
  if (!in.ok()) return in.status();
  const timeline::Timeline& tl = in.value().tl;
  auto ctx = resolve_machine_context(analyses::device_specs(tl), o.ceilings);
  if (!ctx.ok()) return ctx.status();
  const analyses::Analysis a = analyses::analyze(tl, ctx.value());
  if (a.kernels.kernels.empty()) {
    return Status::Error(ErrorCode::kInput, in.value().recording ? "the recording holds no traced kernel (record it "
                                                                   "with `chokepoint run --trace`)"
                                                                 : "no kernel in the input");
  }
  KernelsView v;
  v.inputs = paths;
  v.ceilings = a.ceilings;
  v.kernel_ns = static_cast<double>(a.kernels.kernel_ns);
  v.kernels_total = a.kernels.kernels.size();
  v.kernels = analyses::points_from_trace(tl, a, o.top);
  return v;
}

std::string ncu_function_name(std::string_view n) {
  // The parameter list: the last top-level "(...)" at the end.
  if (!n.empty() && n.back() == ')') {
    int depth = 0;
    for (size_t i = n.size(); i-- > 0;) {
      depth += n[i] == ')' ? 1 : n[i] == '(' ? -1 : 0;
      if (depth == 0) {
        n = n.substr(0, i);
        break;
      }
    }
  }
  // Template arguments at any depth, and a return type before the last top-level space.
  std::string out;
  int depth = 0;
  for (char c : n) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>' && depth > 0) --depth;
  }
  if (const size_t sp = out.rfind(' '); sp != std::string::npos) out = out.substr(sp + 1);
  if (const size_t ns = out.rfind("::"); ns != std::string::npos) out = out.substr(ns + 2);
  return out.empty() ? std::string(n) : out;
}

namespace {

std::string regex_for(const std::string& function) {
  std::string esc;
  for (char c : function) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') esc += '\\';
    esc += c;
  }
  // The name whole, wherever ncu's function name puts it (after a namespace, say).
  return "(^|[^A-Za-z0-9_])" + esc + "([^A-Za-z0-9_]|$)";
}

}  // namespace

Result<NcuPlan> plan_ncu(const std::vector<std::string>& trace_files, const KernelsOptions& o) {
  auto in = load_inputs(trace_files);
  if (!in.ok()) return in.status();
  const timeline::Timeline& tl = in.value().tl;
  auto ctx = resolve_machine_context(analyses::device_specs(tl), o.ceilings);
  if (!ctx.ok()) return ctx.status();
  const analyses::Analysis a = analyses::analyze(tl, ctx.value());
  NcuPlan plan;
  plan.ceilings = a.ceilings;
  plan.kernel_ns = static_cast<double>(a.kernels.kernel_ns);
  plan.kernels_total = a.kernels.kernels.size();
  if (a.kernels.kernels.empty()) return Status::Error(ErrorCode::kInput, "the traced run launched no kernel");
  // Every kernel launch in the order it was made (CUPTI's correlation ids follow the API calls).
  const auto& g = tl.gpu_ops;
  std::vector<size_t> launches;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] == timeline::GpuOpKind::kKernel) launches.push_back(i);
  }
  std::stable_sort(launches.begin(), launches.end(), [&](size_t x, size_t y) {
    return g.correlation[x] != g.correlation[y] ? g.correlation[x] < g.correlation[y] : g.start[x] < g.start[y];
  });
  std::unordered_map<timeline::StringId, std::string> fn;
  for (size_t i : launches) {
    if (fn.find(g.name[i]) == fn.end()) fn.emplace(g.name[i], ncu_function_name(tl.strings.view(g.name[i])));
  }
  const size_t n = o.top == 0 ? a.kernels.kernels.size() : std::min(o.top, a.kernels.kernels.size());
  for (size_t k = 0; k < n; ++k) {
    const auto& s = a.kernels.kernels[k];
    NcuTarget t;
    t.name = tl.strings.view(s.name);
    t.function = fn[s.name];
    t.regex = regex_for(t.function);
    t.calls = s.calls;
    t.ns = static_cast<double>(s.total_ns);
    if (a.kernels.kernel_ns > 0) t.time_pct = 100 * t.ns / static_cast<double>(a.kernels.kernel_ns);
    std::vector<int64_t> mine;  // indices of this kernel's launches among its function's
    int64_t seen = 0;
    for (size_t i : launches) {
      if (fn[g.name[i]] != t.function) continue;
      if (g.name[i] == s.name) mine.push_back(seen);
      ++seen;
    }
    t.launch_skip = mine.empty() ? 0 : mine[mine.size() / 2];
    plan.targets.push_back(std::move(t));
  }
  return plan;
}

std::string ncu_metrics(bool tensor) {
  std::string m =
      "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,"
      "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
      "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,"
      "sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,"
      "sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,"
      "sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_dfma_pred_on.sum,"
      "sm__sass_thread_inst_executed_op_dmul_pred_on.sum,sm__sass_thread_inst_executed_op_dadd_pred_on.sum,"
      "launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block,"
      "launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__occupancy_limit_blocks,"
      "launch__occupancy_limit_warps,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,"
      "smsp__cycles_elapsed.avg.per_second";
  if (tensor) {
    m += ",sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp16.sum,"
         "sm__ops_path_tensor_src_tf32_dst_fp32.sum,sm__ops_path_tensor_src_fp8.sum,"
         "sm__ops_path_tensor_src_fp64.sum,sm__ops_path_tensor_src_int8.sum";
  }
  return m;
}

std::vector<std::string> ncu_command_line(const std::string& ncu, const NcuTarget& t, const std::string& metrics,
                                          const std::vector<std::string>& command) {
  std::vector<std::string> argv = {ncu,
                                   "--clock-control",
                                   "none",
                                   "--csv",
                                   "--page",
                                   "raw",
                                   "--metrics",
                                   metrics,
                                   "-k",
                                   "regex:" + t.regex,
                                   "--launch-skip",
                                   std::to_string(t.launch_skip),
                                   "--launch-count",
                                   "1"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

KernelsView kernels_from_plan(const NcuPlan& plan, const std::vector<NcuTarget>& targets,
                              const std::vector<timeline::KernelMetrics>& metrics,
                              const std::vector<std::string>& inputs) {
  KernelsView v;
  v.inputs = inputs;
  v.measured = true;
  v.ceilings = plan.ceilings;
  v.kernel_ns = plan.kernel_ns;
  v.kernels_total = plan.kernels_total;
  for (size_t i = 0; i < targets.size() && i < metrics.size(); ++i) {
    KernelPoint p = analyses::point_from_ncu(metrics[i], plan.ceilings);
    p.name = targets[i].name;  // the trace's spelling, as the other commands show it
    p.calls = targets[i].calls;
    p.ns = targets[i].ns;
    p.time_pct = targets[i].time_pct;
    v.kernels.push_back(std::move(p));
  }
  v.notes.push_back(
      "time and launches from the traced run; every other figure from the one launch ncu profiled of each kernel "
      "(--clock-control none: the clocks the job runs at)");
  return v;
}

}  // namespace chokepoint::pipeline
