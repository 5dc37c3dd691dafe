#include "report/doctor_render.h"

#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "base/version.h"

namespace chokepoint::report {
namespace {

using Json = nlohmann::ordered_json;
using doctor::NvmlFacts;
using rules::Assessment;

// Columns of the counts: ok, warning, critical, skip.
int column_of(const Assessment& a) {
  switch (a.outcome) {
    case Assessment::Outcome::kPass: return 0;
    case Assessment::Outcome::kSkipped: return 3;
    case Assessment::Outcome::kFinding: return a.severity == Severity::kCritical ? 2 : 1;
  }
  return 3;
}

Tone tone_of(const Assessment& a) {
  switch (column_of(a)) {
    case 0: return Tone::kGreen;
    case 1: return Tone::kYellow;
    case 2: return Tone::kRed;
    default: return Tone::kDim;
  }
}

// Greedy word wrap; every line gets `indent` spaces. A `command in backticks` is kept
// on one line so it can be copied.
void wrap(std::ostringstream& out, const std::string& text, size_t indent, size_t width) {
  const size_t room = width > indent + 20 ? width - indent : 60;
  std::istringstream words(text);
  std::string word, line, next;
  while (words >> word) {
    if (word.front() == '`' && word.find('`', 1) == std::string::npos) {
      while (words >> next) {
        word += " " + next;
        if (next.find('`') != std::string::npos) break;
      }
    }
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      out << std::string(indent, ' ') << line << '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out << std::string(indent, ' ') << line << '\n';
}

void render_check(std::ostringstream& out, const Assessment& c, const RenderOptions& o) {
  constexpr size_t kTagWidth = 10;  // "critical" and two spaces
  constexpr size_t kTitleWidth = 34;
  constexpr size_t kIndent = 8;
  const std::string tag(rules::verdict_of(c));
  const std::string pad(tag.size() < kTagWidth ? kTagWidth - tag.size() : 1, ' ');
  const std::string padded_tag = Style(o)(tone_of(c), tag) + pad;
  // Names in checks (other processes on the GPU, device names, paths) come from the
  // machine: shown with their control characters as escapes (base/terminal_text.h).
  std::string title = escape_controls(c.title);
  if (title.size() < kTitleWidth) title += std::string(kTitleWidth - title.size(), ' ');
  out << "  " << padded_tag << title << ' ';
  // First line of the observation continues after the title; the rest wraps under it.
  std::ostringstream obs;
  wrap(obs, c.observed.empty() ? "-" : escape_controls(c.observed), 2 + kTagWidth + kTitleWidth + 1,
       static_cast<size_t>(o.width));
  std::string obs_text = obs.str();
  const size_t first = obs_text.find_first_not_of(' ');
  out << (first == std::string::npos ? "\n" : obs_text.substr(first));
  if (c.outcome == Assessment::Outcome::kFinding) {
    wrap(out, "expected: " + escape_controls(c.expected), kIndent, static_cast<size_t>(o.width));
  }
  if (!c.advice.empty()) wrap(out, escape_controls(c.advice), kIndent, static_cast<size_t>(o.width));
}

// The first line: what the driver reports, or that only the host was checked.
void render_header(std::ostringstream& out, const NvmlFacts& n) {
  out << "chokepoint doctor: ";
  if (!n.available) {
    out << "no NVIDIA GPU or driver usable here; host checks only.\n";
    return;
  }
  const unsigned count = n.device_count.value_or(0);
  out << count << " GPU" << (count == 1 ? "" : "s");
  if (!n.gpus.empty() && n.gpus[0].name.valid) out << " (" << escape_controls(*n.gpus[0].name) << ")";
  out << ", driver " << escape_controls(n.driver_version.value_or("?"));
  if (n.cuda_driver_version.valid) out << ", CUDA " << nvml::format_cuda_version(*n.cuda_driver_version);
  out << "\n";
}

// Sections in check order: system (driver), each GPU (its index), host.
constexpr int kSystemSection = -1;
constexpr int kHostSection = -2;
constexpr int kNoSection = -3;

int section_of(const Assessment& c) {
  switch (c.scope) {
    case Assessment::Scope::kSystem: return kSystemSection;
    case Assessment::Scope::kGpu: return c.gpu;
    case Assessment::Scope::kHost: return kHostSection;
  }
  return kHostSection;
}

void render_section_heading(std::ostringstream& out, int section, const NvmlFacts& n) {
  if (section == kSystemSection) {
    out << "\nSystem\n";
    return;
  }
  if (section == kHostSection) {
    out << "\nHost\n";
    return;
  }
  out << "\nGPU " << section;
  for (const auto& g : n.gpus) {
    if (static_cast<int>(g.index) != section) continue;
    if (g.name.valid) out << "  " << escape_controls(*g.name);
    if (g.pci.valid) out << "  " << escape_controls(g.pci->bus_id);
  }
  out << "\n";
}

void render_summary(std::ostringstream& out, const DoctorReport& r) {
  int counts[4] = {0, 0, 0, 0};
  for (const auto& c : r.checks) ++counts[column_of(c)];
  char summary[160];
  std::snprintf(summary, sizeof summary, "\n%d ok, %d warning%s, %d critical, %d skipped (%.2f s)\n", counts[0],
                counts[1], counts[1] == 1 ? "" : "s", counts[2], counts[3], r.elapsed_ms / 1000.0);
  out << summary;
}

Json json_or_null(bool valid, const Json& v) { return valid ? v : Json(nullptr); }

}  // namespace

std::string render_doctor_text(const DoctorReport& r, const RenderOptions& o) {
  std::ostringstream out;
  render_header(out, r.nvml);
  int section = kNoSection;
  for (const auto& c : r.checks) {
    if (section_of(c) != section) {
      section = section_of(c);
      render_section_heading(out, section, r.nvml);
    }
    render_check(out, c, o);
  }
  render_summary(out, r);
  return out.str();
}

std::string render_doctor_json(const DoctorReport& r) {
  const NvmlFacts& n = r.nvml;
  Json j;
  j["schema"] = kDoctorSchema;
  j["tool"] = {{"name", "chokepoint"}, {"version", CHOKEPOINT_VERSION}};
  Json nv;
  nv["available"] = n.available;
  nv["error"] = n.available ? Json(nullptr) : Json(n.error);
  nv["library"] = n.available ? Json(n.library) : Json(nullptr);
  nv["driver_version"] = json_or_null(n.driver_version.valid, n.driver_version.value);
  nv["nvml_version"] = json_or_null(n.nvml_version.valid, n.nvml_version.value);
  nv["cuda_driver_version"] = json_or_null(n.cuda_driver_version.valid,
                                           nvml::format_cuda_version(n.cuda_driver_version.value));
  nv["device_count"] = json_or_null(n.device_count.valid, n.device_count.value);
  j["nvml"] = nv;
  Json gpus = Json::array();
  for (const auto& g : n.gpus) {
    Json gj;
    gj["index"] = g.index;
    gj["name"] = json_or_null(g.name.valid, g.name.value);
    gj["uuid"] = json_or_null(g.uuid.valid, g.uuid.value);
    gj["pci_bus_id"] = json_or_null(g.pci.valid, g.pci.value.bus_id);
    gj["memory_total_bytes"] = json_or_null(g.memory.valid, g.memory.value.total);
    gj["memory_used_bytes"] = json_or_null(g.memory.valid, g.memory.value.used);
    gpus.push_back(gj);
  }
  j["gpus"] = gpus;
  Json checks = Json::array();
  int counts[4] = {0, 0, 0, 0};
  for (const auto& c : r.checks) {
    ++counts[column_of(c)];
    Json cj;
    cj["id"] = c.id;
    cj["title"] = c.title;
    cj["gpu"] = c.gpu >= 0 ? Json(c.gpu) : Json(nullptr);
    cj["status"] = std::string(rules::verdict_of(c));
    cj["observed"] = c.observed;
    cj["expected"] = c.expected;
    cj["advice"] = c.advice.empty() ? Json(nullptr) : Json(c.advice);
    checks.push_back(cj);
  }
  j["checks"] = checks;
  j["summary"] = {{"ok", counts[0]}, {"warning", counts[1]}, {"critical", counts[2]}, {"skip", counts[3]}};
  j["exit_code"] = rules::exit_code_for(r.checks);
  j["elapsed_ms"] = r.elapsed_ms;
  return j.dump(2) + "\n";
}

std::string render_doctor(const DoctorReport& r, Format format, const RenderOptions& o) {
  return format == Format::kJson ? render_doctor_json(r) : render_doctor_text(r, o);
}

}  // namespace chokepoint::report
