#include "report/live_panel.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "machine/pcie_link.h"
#include "samples/clock_reasons.h"

namespace chokepoint::report {
namespace {

using live::Latest;
using samples::Entity;
using samples::MetricId;
using samples::ProcessRole;

std::string pct(std::optional<double> v) { return v ? fmt::format("{:3.0f}%", *v) : "  -"; }

std::string num(std::optional<double> v, const char* spec_unit) {
  if (!v) return "-";
  return fmt::format(fmt::runtime(spec_unit), *v);
}

std::string gib(std::optional<double> bytes) {
  return bytes ? fmt::format("{:.0f}", *bytes / (1024.0 * 1024 * 1024)) : "-";
}

std::string per_s(std::optional<double> v) {
  if (!v) return "-";
  if (*v >= 1e6) return fmt::format("{:.1f}M", *v / 1e6);
  if (*v >= 1e4) return fmt::format("{:.0f}k", *v / 1e3);
  if (*v >= 1e3) return fmt::format("{:.1f}k", *v / 1e3);
  return fmt::format("{:.0f}", *v);
}

std::string cut(std::string s, int width) {
  if (width > 0) s = std::string(cut_to_columns(s, static_cast<size_t>(width)));
  return s;
}

// The slowdowns worth a glance (idle and application-clock bits are not).
std::string throttle_text(std::optional<double> mask) {
  if (!mask) return "";
  const auto bits = static_cast<uint64_t>(*mask) &
                    ~(samples::kReasonGpuIdle | samples::kReasonApplicationsClocksSetting |
                      samples::kReasonDisplayClockSetting);
  if (bits == 0) return "";
  std::string out;
  for (const std::string& n : samples::clock_event_reason_names(bits)) out += (out.empty() ? "" : ",") + n;
  return " [" + out + "]";
}

struct TreeSummary {
  int processes = 0, workers = 0, others = 0;
  double main_cpu = 0, workers_cpu = 0, others_cpu = 0;
  std::optional<double> main_running;
  bool has_main = false;
};

TreeSummary summarize_tree(const ViewInput& in) {
  TreeSummary t;
  if (in.processes == nullptr) return t;
  for (const auto& [pid, p] : *in.processes) {
    if (p.exited) continue;
    ++t.processes;
    const double cpu = in.latest->get(MetricId::kProcCpuPct, Entity::process(pid)).value_or(0);
    switch (p.role) {
      case ProcessRole::kLaunched:
        t.has_main = true;
        t.main_cpu = cpu;
        t.main_running = in.latest->get(MetricId::kProcThreadsRunning, Entity::process(pid));
        break;
      case ProcessRole::kDataLoaderWorker:
        ++t.workers;
        t.workers_cpu += cpu;
        break;
      default:
        ++t.others;
        t.others_cpu += cpu;
        break;
    }
  }
  return t;
}

std::vector<std::string> gpu_lines(const ViewInput& in, const samples::GpuMeta& g) {
  const Latest& l = *in.latest;
  const Entity e = Entity::gpu(g.index);
  auto v = [&](MetricId m) { return l.get(m, e); };
  std::string name = g.name;
  if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
  const auto power = v(MetricId::kGpuPowerW), limit = v(MetricId::kGpuPowerLimitW);
  std::string l1 = fmt::format("GPU{} {:<10.10} SM {}  tensor {}  DRAM {}  util {}  mem {}/{} GiB  {}/{} W  {} MHz{}{}",
                               g.index, name, pct(v(MetricId::kGpuSmActive)), pct(v(MetricId::kGpuTensorActive)),
                               pct(v(MetricId::kGpuDramActive)), pct(v(MetricId::kGpuUtilization)),
                               gib(v(MetricId::kGpuMemoryUsedBytes)), gib(v(MetricId::kGpuMemoryTotalBytes)),
                               num(power, "{:.0f}"), num(limit, "{:.0f}"), num(v(MetricId::kGpuSmClockMhz), "{:.0f}"),
                               throttle_text(v(MetricId::kGpuClockEventReasons)), g.used ? "" : "  (not used)");
  const auto gen = v(MetricId::kGpuPcieLinkGen), width = v(MetricId::kGpuPcieLinkWidth);
  const auto gen_max = v(MetricId::kGpuPcieLinkGenMax), width_max = v(MetricId::kGpuPcieLinkWidthMax);
  std::string link = "link -";
  if (gen && width) {
    link = fmt::format("Gen{:.0f} x{:.0f}", *gen, *width);
    if (gen_max && width_max) {
      const double ceil = machine::pcie_gbps_per_direction(static_cast<unsigned>(*gen_max),
                                                           static_cast<unsigned>(*width_max));
      link += fmt::format(" (max Gen{:.0f} x{:.0f}, {:.0f} GB/s)", *gen_max, *width_max, ceil);
    }
  }
  std::string l2 = fmt::format("     PCIe rx {}  tx {}  {}  {} C", format_rate(v(MetricId::kGpuPcieRxBytesPerS)),
                               format_rate(v(MetricId::kGpuPcieTxBytesPerS)), link,
                               num(v(MetricId::kGpuTemperatureC), "{:.0f}"));
  return {l1, l2};
}

std::string host_line(const ViewInput& in) {
  const Latest& l = *in.latest;
  const Entity h = Entity::host();
  auto v = [&](MetricId m) { return l.get(m, h); };
  auto psi = [&](MetricId pct, MetricId avg10) { return v(pct) ? v(pct) : v(avg10); };
  return fmt::format(
      "host usr {} sys {} iowait {} steal {} idle {} | runq {}/{} | ctx {}/s | swap in {} out {} pg/s | PSI cpu {} mem "
      "{} io {}",
      pct(v(MetricId::kHostCpuUserPct)), pct(v(MetricId::kHostCpuSystemPct)), pct(v(MetricId::kHostCpuIowaitPct)),
      pct(v(MetricId::kHostCpuStealPct)), pct(v(MetricId::kHostCpuIdlePct)),
      num(v(MetricId::kHostProcsRunning), "{:.0f}"), in.cpus, per_s(v(MetricId::kHostCtxSwitchesPerS)),
      per_s(v(MetricId::kHostSwapInPagesPerS)), per_s(v(MetricId::kHostSwapOutPagesPerS)),
      num(psi(MetricId::kHostPsiCpuSomePct, MetricId::kHostPsiCpuSomeAvg10), "{:.0f}%"),
      num(psi(MetricId::kHostPsiMemorySomePct, MetricId::kHostPsiMemorySomeAvg10), "{:.0f}%"),
      num(psi(MetricId::kHostPsiIoSomePct, MetricId::kHostPsiIoSomeAvg10), "{:.0f}%"));
}

std::string tree_line(const ViewInput& in) {
  const TreeSummary t = summarize_tree(in);
  if (t.processes == 0) return "tree (no process watched)";
  std::string s = fmt::format("tree {} proc{}:", t.processes, t.processes == 1 ? "" : "s");
  if (t.has_main) {
    s += fmt::format(" main {:.0f}%", t.main_cpu);
    if (t.main_running) s += fmt::format(" ({:.0f} running)", *t.main_running);
  }
  if (t.workers > 0) s += fmt::format("  loader workers {} = {:.0f}%", t.workers, t.workers_cpu);
  if (t.others > 0) s += fmt::format("  other {} = {:.0f}%", t.others, t.others_cpu);
  return s;
}

std::vector<std::string> top_process_lines(const ViewInput& in, size_t n) {
  std::vector<std::pair<double, const samples::ProcessMeta*>> rows;
  for (const auto& [pid, p] : *in.processes) {
    if (p.exited) continue;
    rows.push_back({in.latest->get(MetricId::kProcCpuPct, Entity::process(pid)).value_or(0), &p});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < std::min(n, rows.size()); ++i) {
    const samples::ProcessMeta& p = *rows[i].second;
    const Entity e = Entity::process(p.pid);
    out.push_back(fmt::format("  {:>7} {:<16.16} {:>5.0f}%  threads {} ({} running)  {}", p.pid, p.comm, rows[i].first,
                              num(in.latest->get(MetricId::kProcThreads, e), "{:.0f}"),
                              num(in.latest->get(MetricId::kProcThreadsRunning, e), "{:.0f}"),
                              samples::role_name(p.role)));
  }
  return out;
}

}  // namespace

std::string format_rate(std::optional<double> b) {
  if (!b) return "-";
  if (*b >= 1e9) return fmt::format("{:.1f} GB/s", *b / 1e9);
  if (*b >= 1e6) return fmt::format("{:.0f} MB/s", *b / 1e6);
  if (*b >= 1e3) return fmt::format("{:.0f} kB/s", *b / 1e3);
  return fmt::format("{:.0f} B/s", *b);
}

std::vector<std::string> render_live_panel(const ViewInput& in, const RenderOptions& options, int max_lines) {
  const int width = options.width;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("chokepoint {:.0f} s | {} | rec {}", in.elapsed_s, in.title, in.dir));
  if (!in.verdict.empty()) lines.push_back("verdict so far: " + in.verdict);
  if (!in.meta->gpu_unavailable.empty()) {
    lines.push_back("GPU  metrics unavailable: " + in.meta->gpu_unavailable);
  }
  // Used GPUs first; what does not fit becomes one line.
  std::vector<const samples::GpuMeta*> gpus;
  for (const auto& g : in.meta->gpus) {
    if (g.used) gpus.push_back(&g);
  }
  for (const auto& g : in.meta->gpus) {
    if (!g.used) gpus.push_back(&g);
  }
  const int fixed = 3 + 2;  // host, tree, and at least two processes
  const int room = std::max(0, max_lines - static_cast<int>(lines.size()) - fixed);
  const size_t shown = std::min(gpus.size(), static_cast<size_t>(room / 2));
  for (size_t i = 0; i < shown; ++i) {
    for (std::string& l : gpu_lines(in, *gpus[i])) lines.push_back(std::move(l));
  }
  if (shown < gpus.size()) lines.push_back(fmt::format("     ... {} more GPU(s) not shown", gpus.size() - shown));
  lines.push_back(host_line(in));
  if (in.processes != nullptr) {
    lines.push_back(tree_line(in));
    const int left = max_lines - static_cast<int>(lines.size());
    for (std::string& l : top_process_lines(in, static_cast<size_t>(std::clamp(left, 0, 3))))
      lines.push_back(std::move(l));
  }
  if (static_cast<int>(lines.size()) > max_lines) lines.resize(static_cast<size_t>(std::max(0, max_lines)));
  // The command line, the recording's path and the device and process names are someone
  // else's text; the lines hold nothing else that is not printable, so each line is made
  // safe whole (base/terminal_text.h) before the panel draws it between its own escapes.
  for (std::string& l : lines) l = cut(escape_controls(l), width);
  return lines;
}

std::string render_live_line(const ViewInput& in) {
  const Latest& l = *in.latest;
  std::string s = fmt::format("chokepoint {:.0f}s", in.elapsed_s);
  for (const auto& g : in.meta->gpus) {
    if (!g.used && in.meta->gpus.size() > 1) continue;
    const Entity e = Entity::gpu(g.index);
    s += fmt::format(" | GPU{} SM {} tensor {} DRAM {} util {} mem {}GiB {}W", g.index,
                     pct(l.get(MetricId::kGpuSmActive, e)), pct(l.get(MetricId::kGpuTensorActive, e)),
                     pct(l.get(MetricId::kGpuDramActive, e)), pct(l.get(MetricId::kGpuUtilization, e)),
                     gib(l.get(MetricId::kGpuMemoryUsedBytes, e)), num(l.get(MetricId::kGpuPowerW, e), "{:.0f}"));
  }
  const Entity h = Entity::host();
  s += fmt::format(" | host usr {} iowait {} steal {} runq {}", pct(l.get(MetricId::kHostCpuUserPct, h)),
                   pct(l.get(MetricId::kHostCpuIowaitPct, h)), pct(l.get(MetricId::kHostCpuStealPct, h)),
                   num(l.get(MetricId::kHostProcsRunning, h), "{:.0f}"));
  if (in.processes != nullptr) s += " | " + tree_line(in);
  if (!in.verdict.empty()) s += " | verdict so far: " + in.verdict;
  // Collapse the padding the panel uses for alignment; control characters of names are
  // escapes, as in the panel.
  std::string out;
  for (char c : escape_controls(s)) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

live::LiveRenderer live_renderer() {
  live::LiveRenderer r;
  r.panel = [](const ViewInput& in, int width, int max_lines) {
    RenderOptions o;
    o.width = width;
    return render_live_panel(in, o, max_lines);
  };
  r.line = render_live_line;
  return r;
}

}  // namespace chokepoint::report
