// Sections of the HTML report (html_reporter.cc) about the machine: what live sampling
// saw, the devices (one row per rank), and the import warnings.
#include <fmt/format.h>

#include "report/format_util.h"
#include "report/html_parts.h"
#include "report/report.h"

namespace chokepoint::report {
namespace {

using html::esc;

struct Metric {
  const char* label;
  const std::optional<LiveStat>* stat;
  double scale;  // to the unit shown
  const char* unit;
};

std::string stat_rows(const std::vector<Metric>& metrics) {
  std::string s;
  for (const Metric& m : metrics) {
    if (!*m.stat) continue;
    const LiveStat& v = **m.stat;
    s += fmt::format(
        "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>", m.label,
        html::fmt_num(v.mean * m.scale, 1), html::fmt_num(v.p95 * m.scale, 1), html::fmt_num(v.max * m.scale, 1),
        m.unit);
  }
  return s;
}

constexpr const char* kStatHead =
    "<table><thead><tr><th>metric</th><th class=\"n\">mean</th><th class=\"n\">p95</th><th class=\"n\">max</th>"
    "<th>unit</th></tr></thead><tbody>";

std::string gpu_html(const LiveGpu& g) {
  std::string s = fmt::format("<h3>GPU {} {}{}</h3>", g.index, esc(g.name), g.used ? "" : " (not used by the job)");
  std::vector<html::Segment> bars;
  for (const auto& [label, stat] : {std::pair<const char*, const std::optional<LiveStat>*>{"utilization", &g.util_pct},
                                    {"SM active", &g.sm_active_pct},
                                    {"SM occupancy", &g.sm_occupancy_pct},
                                    {"tensor active", &g.tensor_active_pct},
                                    {"DRAM active", &g.dram_active_pct}}) {
    if (*stat) bars.push_back({label, (*stat)->mean});
  }
  if (!bars.empty()) s += "<p class=\"muted\">Mean over the active window</p>" + html::pct_bars(bars);
  s += kStatHead;
  s += stat_rows({{"utilization", &g.util_pct, 1, "%"},
                  {"SM active", &g.sm_active_pct, 1, "%"},
                  {"SM occupancy", &g.sm_occupancy_pct, 1, "%"},
                  {"tensor active", &g.tensor_active_pct, 1, "%"},
                  {"DRAM active", &g.dram_active_pct, 1, "%"},
                  {"PCIe to GPU", &g.pcie_rx_bytes_per_s, 1e-9, "GB/s"},
                  {"PCIe from GPU", &g.pcie_tx_bytes_per_s, 1e-9, "GB/s"},
                  {"power", &g.power_w, 1, "W"},
                  {"SM clock", &g.sm_clock_mhz, 1, "MHz"}});
  return s + "</tbody></table>";
}

std::string host_html(const LiveSummary& l) {
  const LiveHost& h = l.host;
  std::string s = fmt::format("<h3>Host ({} CPUs)</h3>", h.cpus) + kStatHead;
  s += stat_rows({{"user CPU", &h.user_pct, 1, "%"},
                  {"system CPU", &h.system_pct, 1, "%"},
                  {"iowait", &h.iowait_pct, 1, "%"},
                  {"steal", &h.steal_pct, 1, "%"},
                  {"runnable threads", &h.procs_running, 1, ""},
                  {"PSI cpu some", &h.psi_cpu_some, 1, "%"},
                  {"PSI memory some", &h.psi_memory_some, 1, "%"},
                  {"PSI io some", &h.psi_io_some, 1, "%"}});
  s += "</tbody></table>";
  if (l.top_processes.empty()) return s;
  s += "<h3>Busiest processes (data loader workers among them)</h3><table class=\"sortable\"><thead><tr><th>pid</th>"
       "<th>command</th><th>role</th><th class=\"n\">CPU % mean</th><th class=\"n\">CPU % p95</th></tr></thead><tbody>";
  for (const LiveProcess& p : l.top_processes) {
    s += fmt::format(
        "<tr><td>{}</td><td class=\"mono\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
        p.pid, esc(p.comm), esc(p.role), p.cpu_pct ? html::fmt_num(p.cpu_pct->mean, 0) : "-",
        p.cpu_pct ? html::fmt_num(p.cpu_pct->p95, 0) : "-");
  }
  return s + "</tbody></table>";
}

}  // namespace

std::string html_live_section(const Report& r) {
  if (!r.live) return "";
  const LiveSummary& l = *r.live;
  std::string s = "<section id=\"live\"><h2>Live samples</h2>";
  s += fmt::format("<p>{} ticks over {} s (every {} ms){}</p>", l.ticks, html::fmt_num(l.duration_s, 1),
                   html::fmt_num(l.interval_ms, 0), l.complete ? "" : " · the recording is incomplete");
  if (!l.gpu_unavailable.empty()) s += "<p class=\"muted\">" + esc(l.gpu_unavailable) + "</p>";
  if (!l.gpu_note.empty()) s += "<p class=\"muted\">" + esc(l.gpu_note) + "</p>";
  s += "<div class=\"grid\">";
  for (const LiveGpu& g : l.gpus) s += "<div>" + gpu_html(g) + "</div>";
  s += "<div>" + host_html(l) + "</div></div>";
  if (!l.series.empty()) {
    s += "<h3>Over time</h3><div class=\"grid\">";
    s += html::time_charts(l.series, l.series_bucket_s);
    s += "</div>";
  }
  return s + "</section>\n";
}

std::string html_devices_section(const Report& r) {
  if (r.devices.size() < 2) return "";
  std::string s =
      "<section id=\"devices\"><h2>Devices (one per rank)</h2><table><thead><tr><th>#</th><th>name</th>"
      "<th class=\"n\">SMs</th><th>compute</th><th>ceilings</th></tr></thead><tbody>";
  for (size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceInfo& d = r.devices[i];
    s += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>", i, esc(d.name),
                     d.num_sms, esc(d.compute_capability), esc(d.ceilings.source));
  }
  return s + "</tbody></table></section>\n";
}

std::string html_import_section(const Report& r) {
  if (r.import_stats.empty()) return "";
  std::string s = "<section id=\"import\"><h2>Import warnings</h2><table><tbody>";
  for (const timeline::ImportStat& st : r.import_stats) {
    const std::string sev(severity_name(st.severity));
    s += "<tr><td><span class=\"badge " + sev + "\">" + sev + "</span></td><td class=\"mono\">" + esc(st.name) +
         "</td><td class=\"n\">" + format_count(st.count) + "</td><td>" + esc(st.description) + "</td></tr>";
  }
  return s + "</tbody></table></section>\n";
}

}  // namespace chokepoint::report
