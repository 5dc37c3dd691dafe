#include "report/json_report_reader.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace chokepoint::report {
namespace {

using Json = nlohmann::ordered_json;  // keeps the report's order of breakdown shares

// A number, or `fallback` for null, absent and non-numbers (the contract's "unknown").
double number(const Json& j, const char* key, double fallback = 0) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::optional<double> maybe(const Json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

// The end of "estimated_speedup_range" that is not the estimate itself, when there is a range.
std::optional<double> range_end(const Json& j, const std::optional<double>& estimate) {
  if (!estimate || !j.is_object()) return std::nullopt;
  auto it = j.find("estimated_speedup_range");
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number())
    return std::nullopt;
  const double lo = (*it)[0].get<double>(), hi = (*it)[1].get<double>();
  return std::abs(lo - *estimate) <= std::abs(hi - *estimate) ? hi : lo;
}

std::string text(const Json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json& member(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::vector<std::string> strings(const Json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const Json& s : j) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

// Hex hashes back to numbers; what does not parse is left out (sorted again: a report
// edited by hand may not be).
void read_fingerprint(const Json& j, analyses::Fingerprint& f) {
  f.program = text(j, "program");
  auto hashes = [&](const char* key, std::vector<uint64_t>& out) {
    for (const std::string& h : strings(member(j, key))) {
      if (h.empty() || h.size() > 16 || h.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
      out.push_back(std::stoull(h, nullptr, 16));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  hashes("kernels", f.kernels);
  hashes("shapes", f.shapes);
}

rules::Category category_from(const std::string& name) {
  for (int c = 0; c <= static_cast<int>(rules::Category::kUnknown); ++c) {
    if (name == rules::category_name(static_cast<rules::Category>(c))) return static_cast<rules::Category>(c);
  }
  return rules::Category::kUnknown;
}

Severity severity_from(const std::string& name) {
  if (name == severity_name(Severity::kCritical)) return Severity::kCritical;
  if (name == severity_name(Severity::kWarning)) return Severity::kWarning;
  return Severity::kInfo;
}

void read_window(const Json& w, Report& r) {
  r.window.steps = static_cast<int64_t>(number(w, "steps"));
  r.window.step_source = text(w, "step_source");
  const Json& st = member(w, "step_time_ms");
  r.window.step_time_ms = {number(st, "mean"), number(st, "p50"), number(st, "p95"), number(st, "min"),
                           number(st, "max")};
  r.window.analyzed_ms = number(w, "analyzed_ms");
  for (const Json& n : member(w, "step_numbers")) {
    if (n.is_number()) r.window.step_numbers.push_back(n.get<int64_t>());
  }
  for (const Json& v : member(w, "step_ms")) {
    if (v.is_number()) r.window.step_ms.push_back(v.get<double>());
  }
}

// {name: pct} with {name: ms} beside it, or ms from the pct and the step time.
std::vector<Share> shares(const Json& pct, const Json& ms, double step_ms) {
  std::vector<Share> out;
  if (!pct.is_object()) return out;
  for (const auto& [name, v] : pct.items()) {
    Share s{name, v.is_number() ? v.get<double>() : 0, 0};
    s.ms_per_step = ms.is_object() ? number(ms, name.c_str(), s.pct / 100 * step_ms) : s.pct / 100 * step_ms;
    out.push_back(s);
  }
  return out;
}

void read_breakdown(const Json& b, Report& r) {
  const double step_ms = r.window.steps > 0 ? r.window.analyzed_ms / static_cast<double>(r.window.steps) : 0;
  r.breakdown.gpu_busy_pct = number(b, "gpu_busy_pct");
  r.breakdown.gpu_idle_pct = number(b, "gpu_idle_pct");
  r.breakdown.idle_by_cause = shares(member(b, "idle_pct"), member(b, "idle_ms_per_step"), step_ms);
  r.breakdown.busy_by_class = shares(member(b, "busy_pct"), member(b, "busy_ms_per_step"), step_ms);
  r.breakdown.category_costs = shares(member(b, "category_cost_pct"), Json(), step_ms);
}

void read_findings(const Json& j, Report& r) {
  for (const Json& f : member(j, "findings")) {
    rules::Finding x;
    x.id = text(f, "id");
    x.category = category_from(text(f, "category"));
    x.severity = severity_from(text(f, "severity"));
    x.title = text(f, "title");
    x.detail = text(f, "detail");
    x.recommendation = text(f, "recommendation");
    x.estimated_speedup = maybe(f, "estimated_speedup");
    x.speedup_range_end = range_end(f, x.estimated_speedup);
    x.time_share_pct = number(f, "time_share_pct");
    x.remedies = strings(member(f, "remedies"));
    x.estimate_remedy = text(f, "estimate_remedy");
    x.sources = strings(member(f, "sources"));
    r.findings.push_back(std::move(x));
  }
  for (const Json& a : member(j, "remedies")) {
    rules::RemedyAdvice x;
    x.id = text(a, "id");
    x.title = text(a, "title");
    x.change = text(a, "change");
    x.estimated_speedup = maybe(a, "estimated_speedup");
    x.speedup_range_end = range_end(a, x.estimated_speedup);
    x.estimate_from = text(a, "estimate_from");
    x.step_ms_before = number(a, "step_ms_before");
    x.step_ms_after = number(a, "step_ms_after");
    x.what_changes = text(a, "what_changes");
    x.findings = strings(member(a, "findings"));
    r.remedies.push_back(std::move(x));
  }
  r.already_on = strings(member(j, "already_on"));  // diff's promise check reads it
}

void read_kernels(const Json& j, Report& r) {
  for (const Json& k : member(j, "top_kernels")) {
    KernelRow row;
    row.name = text(k, "name");
    row.kernel_class = text(k, "class");
    row.precision = text(k, "precision");
    if (const Json& tc = member(k, "tensor_cores"); tc.is_boolean()) row.tensor_cores = tc.get<bool>();
    row.calls = static_cast<int64_t>(number(k, "calls"));
    row.total_ms = number(k, "total_ms");
    row.pct_of_busy = number(k, "pct_of_busy");
    r.top_kernels.push_back(std::move(row));
  }
  for (const Json& c : member(j, "roofline")) {
    RooflineClass row;
    row.kernel_class = text(c, "class");
    row.kernels = static_cast<int64_t>(number(c, "kernels"));
    row.ms_per_step = number(c, "ms_per_step");
    row.pct_of_step = number(c, "pct_of_step");
    row.achieved_tflops = maybe(c, "achieved_tflops");
    row.pct_of_peak = maybe(c, "pct_of_peak");
    row.achieved_gbps = maybe(c, "achieved_gbps");
    row.pct_of_hbm = maybe(c, "pct_of_hbm");
    row.bound = text(c, "bound");
    r.roofline.push_back(std::move(row));
  }
}

void read_device(const Json& d, Report& r) {
  if (!d.is_object()) return;
  DeviceInfo di;
  di.name = text(d, "name");
  di.num_sms = static_cast<int32_t>(number(d, "sms", -1));
  di.memory_bytes = static_cast<int64_t>(number(d, "memory_bytes", -1));
  di.compute_capability = text(d, "compute_capability");
  const Json& c = member(d, "ceilings");
  di.ceilings.source = text(c, "source");
  di.ceilings.hbm_gbps = maybe(c, "hbm_gbps");
  di.ceilings.pcie_gbps = maybe(c, "pcie_gbps");
  di.ceilings.fp32_tflops = maybe(c, "fp32_tflops");
  di.ceilings.tf32_tflops = maybe(c, "tf32_tflops");
  di.ceilings.bf16_tflops = maybe(c, "bf16_tflops");
  di.ceilings.fp8_tflops = maybe(c, "fp8_tflops");
  r.devices.push_back(std::move(di));
}

// The import stats the report carried (a truncated trace's warning must survive into a
// diff of the report), and a critical one for fields whose values have the wrong type:
// such a report was edited or damaged, and its zeros are not measurements (issue 47).
void read_import_stats(const Json& j, Report& r) {
  for (const Json& s : member(j, "import_stats")) {
    if (!s.is_object()) continue;
    r.import_stats.push_back({text(s, "name"), severity_from(text(s, "severity")), text(s, "description"),
                              static_cast<int64_t>(number(s, "count"))});
  }
  std::vector<std::string> wrong;
  auto expect = [&](const Json& parent, const char* key, bool (Json::*is)() const noexcept, const std::string& path) {
    if (!parent.is_object()) return;
    const auto it = parent.find(key);
    if (it != parent.end() && !it->is_null() && !((*it).*is)()) wrong.push_back(path);
  };
  const Json& w = member(j, "window");
  expect(j, "window", &Json::is_object, "window");
  expect(w, "steps", &Json::is_number, "window.steps");
  expect(w, "step_time_ms", &Json::is_object, "window.step_time_ms");
  for (const char* k : {"mean", "p50", "p95", "min", "max"}) {
    expect(member(w, "step_time_ms"), k, &Json::is_number, std::string("window.step_time_ms.") + k);
  }
  expect(j, "findings", &Json::is_array, "findings");
  expect(j, "remedies", &Json::is_array, "remedies");
  expect(j, "breakdown", &Json::is_object, "breakdown");
  for (const Json& f : member(j, "findings")) {
    expect(f, "id", &Json::is_string, "findings[].id");
    expect(f, "time_share_pct", &Json::is_number, "findings[].time_share_pct");
  }
  if (wrong.empty()) return;
  std::string names;
  for (const std::string& n : wrong) names += (names.empty() ? "" : ", ") + n;
  r.import_stats.push_back({"report_fields_mistyped", Severity::kCritical,
                            "fields of the JSON report with a value of the wrong type, read as unknown: " + names,
                            static_cast<int64_t>(wrong.size())});
}

}  // namespace

bool looks_like_json_report(std::string_view head) {
  const size_t brace = head.find_first_not_of(" \t\r\n");
  return brace != std::string_view::npos && head[brace] == '{' &&
         head.find("\"chokepoint.report/") != std::string_view::npos;
}

Result<Report> report_from_json(std::string_view body) {
  const Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Error(ErrorCode::kInput, "not JSON");
  const std::string schema = text(j, "schema");
  if (schema != kSchema) {
    return Status::Error(ErrorCode::kInput, schema.empty() ? std::string("not a chokepoint report (no \"schema\")")
                                                           : "a report of schema '" + schema + "', not " + kSchema);
  }
  Report r;
  r.tool_version = text(member(j, "tool"), "version");
  for (const Json& in : member(j, "inputs")) {
    r.inputs.push_back({text(in, "path"), text(in, "format"), static_cast<uint64_t>(number(in, "bytes")),
                        static_cast<int64_t>(number(in, "events", -1))});
  }
  read_device(member(j, "device"), r);
  read_window(member(j, "window"), r);
  read_breakdown(member(j, "breakdown"), r);
  const Json& v = member(j, "verdict");
  r.verdict.bound = category_from(text(v, "bound"));
  r.verdict.confidence = number(v, "confidence");
  r.verdict.summary = text(v, "summary");
  r.verdict.unknown_reason = text(v, "unknown_reason");
  read_findings(j, r);
  read_kernels(j, r);
  if (const Json& rp = member(j, "replay"); rp.is_object()) {
    r.replay = Replay{static_cast<int64_t>(number(rp, "steps")), number(rp, "recorded_step_ms"),
                      number(rp, "replayed_step_ms"), number(rp, "plain_step_ms"), text(rp, "recorder")};
  }
  r.mfu_pct = maybe(j, "mfu_pct");
  r.mfu_precision = text(j, "mfu_precision");
  read_import_stats(j, r);
  read_fingerprint(member(j, "fingerprint"), r.fingerprint);
  return r;
}

}  // namespace chokepoint::report
