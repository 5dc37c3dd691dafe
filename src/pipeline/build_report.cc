#include "pipeline/build_report.h"

#include <algorithm>
#include <filesystem>

#include "base/version.h"
#include "pipeline/step_views.h"

namespace chokepoint::pipeline {

using analyses::IdleCause;
using analyses::KernelClass;

namespace {

// How many of the longest kernels the report lists.
constexpr size_t kTopKernels = 10;

report::Distribution distribution_ms(std::vector<double> v) {
  report::Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  auto pick = [&](double q) {  // nearest rank
    size_t k = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(k, v.size() - 1)];
  };
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  d.p50 = pick(0.5);
  d.p95 = pick(0.95);
  d.min = v.front();
  d.max = v.back();
  return d;
}

// The ceilings the analyses divide by that this GPU lacks (those of its kind: no TF32
// where the compute capability has none), and how to supply them.
void missing_ceilings(report::Ceilings& r, const machine::Ceilings& c) {
  auto need = [&r](const std::optional<double>& v, const char* what) {
    if (!v) r.missing.emplace_back(what);
  };
  need(c.hbm_gbps, "memory bandwidth");
  if (c.pcie_gen != 0) need(c.pcie_gbps, "host link bandwidth");  // 0: no PCIe (Jetson, NVLink-C2C)
  need(c.fp32_tflops, "FP32 TFLOP/s");
  if (c.has_tf32) need(c.tf32_tflops, "TF32 TFLOP/s");
  if (c.has_tensor_cores) need(c.bf16_tflops, "BF16 TFLOP/s");
  if (r.missing.empty()) return;
  std::string what;
  for (size_t i = 0; i < r.missing.size(); ++i) {
    if (i > 0) what += i + 1 == r.missing.size() ? " and " : ", ";
    what += r.missing[i];
  }
  r.missing_hint = machine::missing_ceiling(c, what);
}

report::Ceilings ceilings(const machine::Ceilings& c) {
  report::Ceilings r;
  r.source = c.source;
  r.hbm_gbps = c.hbm_gbps;
  r.pcie_gbps = c.pcie_gbps;
  r.fp32_tflops = c.fp32_tflops;
  r.tf32_tflops = c.tf32_tflops;
  r.bf16_tflops = c.bf16_tflops;
  r.fp8_tflops = c.fp8_tflops;
  r.fp4_tflops = c.fp4_tflops;
  r.int8_tops = c.int8_tops;
  r.l2_mb = c.l2_mb;
  r.gpu = c.gpu;
  r.note = c.note;
  missing_ceilings(r, c);
  return r;
}

void add_inputs(report::Report& r, const timeline::Timeline& tl) {
  for (size_t i = 0; i < tl.sources.size(); ++i) {
    report::InputInfo in;
    in.path = tl.sources[i].path;
    in.format = tl.sources[i].format;
    std::error_code ec;
    auto size = std::filesystem::file_size(in.path, ec);
    in.bytes = ec ? 0 : size;
    in.events = tl.sources.size() == 1 ? static_cast<int64_t>(tl.event_count()) : -1;
    r.inputs.push_back(in);
  }
}

void add_devices(report::Report& r, const timeline::Timeline& tl, const analyses::Analysis& a) {
  // Primary device first.
  std::vector<size_t> order;
  if (a.primary_device >= 0) order.push_back(static_cast<size_t>(a.primary_device));
  for (size_t i = 0; i < tl.devices.size(); ++i) {
    if (static_cast<int>(i) != a.primary_device) order.push_back(i);
  }
  for (size_t i : order) {
    const auto& dv = tl.devices[i];
    report::DeviceInfo di;
    di.name = dv.name;
    di.num_sms = dv.num_sms;
    di.memory_bytes = dv.total_memory_bytes;
    if (dv.cc_major >= 0) di.compute_capability = std::to_string(dv.cc_major) + "." + std::to_string(dv.cc_minor);
    di.ceilings = ceilings(static_cast<int>(i) == a.primary_device ? a.ceilings
                           : i < a.device_ceilings.size()
                               ? a.device_ceilings[i]
                               : machine::published_ceilings_for(analyses::device_specs(tl)[i]));
    r.devices.push_back(di);
  }
}

void add_window(report::Report& r, const analyses::Analysis& a) {
  std::vector<double> step_ms;
  for (const auto& w : a.windows.steps) {
    step_ms.push_back(static_cast<double>(w.duration()) / 1e6);
    r.window.step_numbers.push_back(w.number);
  }
  r.window.steps = a.steps();
  r.window.step_source = a.windows.method;
  if (r.window.steps > 0) r.window.step_ms = step_ms;  // the samples `diff` tests for noise
  r.window.step_time_ms = distribution_ms(step_ms);
  r.window.analyzed_ms = static_cast<double>(a.total().duration) / 1e6;
}

// The steps of each file apart, when they come from two files or more of one process:
// profiler windows of one job (steps.cc chains and clips steps per file).
void add_profiler_windows(report::Report& r, const timeline::Timeline& tl, const analyses::Analysis& a) {
  const auto& ws = a.windows.steps;
  if (ws.empty() || a.windows.whole_trace) return;
  std::vector<int32_t> sources;
  for (const auto& w : ws) {
    if (w.pid != ws.front().pid) return;  // ranks or other processes, not windows of one
    if (std::find(sources.begin(), sources.end(), w.source) == sources.end()) sources.push_back(w.source);
  }
  if (sources.size() < 2) return;
  for (const int32_t src : sources) {
    report::ProfilerWindow pw;
    if (src >= 0 && static_cast<size_t>(src) < tl.sources.size()) pw.path = tl.sources[src].path;
    std::vector<double> ms;
    timeline::TimeNs busy = 0, total = 0;
    for (size_t i = 0; i < ws.size(); ++i) {
      if (ws[i].source != src) continue;
      if (pw.steps++ == 0) pw.first_step = ws[i].number;
      pw.last_step = ws[i].number;
      ms.push_back(static_cast<double>(ws[i].duration()) / 1e6);
      if (i < a.breakdown.steps.size()) busy += a.breakdown.steps[i].busy;
      total += ws[i].duration();
    }
    pw.step_time_ms = distribution_ms(ms);
    pw.gpu_busy_pct = total > 0 ? 100.0 * static_cast<double>(busy) / static_cast<double>(total) : 0;
    r.window.profiler_windows.push_back(std::move(pw));
  }
}

void add_breakdown(report::Report& r, const analyses::Analysis& a, const rules::Diagnosis& d) {
  const auto& t = a.total();
  r.breakdown.gpu_busy_pct = a.pct(t.busy);
  r.breakdown.gpu_idle_pct = a.pct(t.idle_total());
  for (int c = 0; c < analyses::kNumIdleCauses; ++c) {
    if (t.idle[c] <= 0) continue;
    r.breakdown.idle_by_cause.push_back(
        {analyses::idle_cause_name(static_cast<IdleCause>(c)), a.pct(t.idle[c]), a.ms_per_step(t.idle[c])});
  }
  for (int c = 0; c < analyses::kNumKernelClasses; ++c) {
    if (t.busy_by_class[c] <= 0) continue;
    r.breakdown.busy_by_class.push_back({analyses::kernel_class_name(static_cast<KernelClass>(c)),
                                         a.pct(t.busy_by_class[c]), a.ms_per_step(t.busy_by_class[c])});
  }
  auto by_pct = [](const report::Share& x, const report::Share& y) { return x.pct > y.pct; };
  std::sort(r.breakdown.idle_by_cause.begin(), r.breakdown.idle_by_cause.end(), by_pct);
  std::sort(r.breakdown.busy_by_class.begin(), r.breakdown.busy_by_class.end(), by_pct);
  for (const auto& c : d.costs) {
    r.breakdown.category_costs.push_back({rules::category_name(c.category), c.pct, a.ms_per_step(c.ns)});
  }
}

void add_top_kernels(report::Report& r, const timeline::Timeline& tl, const analyses::Analysis& a) {
  const double busy_kernels = static_cast<double>(std::max<timeline::TimeNs>(1, a.kernels.kernel_ns));
  for (size_t i = 0; i < std::min(kTopKernels, a.kernels.kernels.size()); ++i) {
    const auto& k = a.kernels.kernels[i];
    report::KernelRow row;
    row.name = std::string(tl.strings.view(k.name));
    row.kernel_class = analyses::kernel_class_name(k.kclass);
    row.precision = analyses::precision_name(k.precision);
    if (k.tensor_cores != analyses::TensorCores::kUnknown)
      row.tensor_cores = k.tensor_cores == analyses::TensorCores::kYes;
    row.calls = k.calls;
    row.total_ms = static_cast<double>(k.total_ns) / 1e6;
    row.pct_of_busy = 100.0 * static_cast<double>(k.total_ns) / busy_kernels;
    r.top_kernels.push_back(row);
  }
}

// The roofline of each kernel class against this machine's ceilings.
void add_roofline(report::Report& r, const analyses::Analysis& a) {
  const auto& c = a.ceilings;
  for (const auto& cl : a.roofline.classes) {
    report::RooflineClass row;
    row.kernel_class = analyses::kernel_class_name(cl.kclass);
    row.kernels = cl.kernels;
    row.ms_per_step = a.ms_per_step(cl.ns);
    row.pct_of_step = a.pct(cl.ns);
    row.achieved_tflops = cl.achieved_tflops();
    row.achieved_gbps = cl.achieved_gbps();
    if (row.achieved_gbps && c.hbm_gbps) row.pct_of_hbm = 100 * *row.achieved_gbps / *c.hbm_gbps;
    if (row.achieved_tflops && a.roofline.mfu_precision != analyses::Precision::kUnknown) {
      if (const auto peak = analyses::peak_tflops(c, a.roofline.mfu_precision))
        row.pct_of_peak = 100 * *row.achieved_tflops / *peak;
    }
    const double mem = cl.ns > 0 ? static_cast<double>(cl.memory_bound_ns) / static_cast<double>(cl.ns) : 0;
    row.bound = cl.kclass == KernelClass::kOther || cl.kclass == KernelClass::kCommunication ? ""
                : mem >= 0.9                                                                 ? "memory"
                : mem <= 0.1                                                                 ? "compute"
                                                                                             : "mixed";
    r.roofline.push_back(std::move(row));
  }
}

void add_what_ifs(report::Report& r, const analyses::Analysis& a) {
  for (const auto& e : a.remedies) {
    rules::RemedyAdvice w;
    const rules::RemedyInfo* info = rules::find_remedy(e.remedy);
    w.id = analyses::whatif::remedy_id(e.remedy);
    if (info != nullptr) {
      w.title = info->title;
      w.change = info->change;
      w.changes_training = info->changes_training;
    }
    w.estimated_speedup = e.speedup;
    w.speedup_range_end = e.speedup_at_high_cost;
    w.estimate_from = "trace what-if";
    w.step_ms_before = e.step_ms_before;
    w.step_ms_after = e.step_ms_after;
    w.what_changes = e.change;
    w.assumptions = e.assumptions;
    r.what_ifs.push_back(std::move(w));
  }
}

}  // namespace

void apply_diagnosis(report::Report& r, const rules::Diagnosis& d) {
  r.verdict.bound = d.bound;
  r.verdict.confidence = d.confidence;
  r.verdict.summary = d.summary;
  r.verdict.unknown_reason = d.unknown_reason;
  r.verdict.data_lost = d.data_lost;
  r.findings = d.findings;
  r.remedies = d.remedies;
}

report::Report build_report(const timeline::Timeline& tl, const analyses::Analysis& a, const rules::Diagnosis& d,
                            const timeline::ImportStats& stats) {
  report::Report r;
  r.tool_version = CHOKEPOINT_VERSION;
  add_inputs(r, tl);
  add_devices(r, tl, a);
  add_window(r, a);
  add_profiler_windows(r, tl, a);
  for (const auto rem : a.already_applied) r.already_on.emplace_back(analyses::whatif::remedy_id(rem));
  add_breakdown(r, a, d);
  add_step_views(r, tl, a);

  apply_diagnosis(r, d);

  add_top_kernels(r, tl, a);
  add_roofline(r, a);
  if (!d.estimates_withheld) add_what_ifs(r, a);
  r.mfu_pct = a.roofline.mfu_pct;
  r.mfu_precision = analyses::precision_name(a.roofline.mfu_precision);
  // The replay is what the estimates start from: withheld with them (a cut trace's replay
  // printed "5.46 ms per step recorded" beside steps of 0.03 ms).
  if (a.replay.available && !d.estimates_withheld) {
    report::Replay rp;
    rp.steps = a.replay.steps;
    rp.recorded_step_ms = a.replay.recorded_step_ms;
    rp.replayed_step_ms = a.replay.replayed_step_ms;
    rp.plain_step_ms = a.replay.plain_step_ms;
    rp.recorder = a.replay.recorder;
    r.replay = rp;
  }
  for (const auto& s : stats.all()) {
    if (s.count > 0) r.import_stats.push_back(s);
  }
  return r;
}

}  // namespace chokepoint::pipeline
