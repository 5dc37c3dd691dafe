#include "analyses/stacks/gil.h"

#include "analyses/stacks/hotspots.h"

#include <algorithm>
#include <map>

namespace chokepoint::analyses {

namespace {

bool has(std::string_view s, std::string_view sub) { return s.find(sub) != std::string_view::npos; }

}  // namespace

bool stack_waits(const samples::PyStacks& s, const std::vector<int32_t>& stack) {
  if (stack.empty()) return true;
  for (int32_t id : stack) {
    const samples::PyFrame& f = s.frames[id];
    if (samples::is_library_file(f.file)) {
      // The standard library's waits (threading, queue, selectors, socket, multiprocessing),
      // the DataLoader's queue, torch's synchronize.
      for (std::string_view fn : {"wait", "acquire", "get", "join", "select", "poll", "recv", "_recv", "accept",
                                  "sleep", "synchronize", "_wait_for_tstate_lock", "read", "readinto", "_poll"}) {
        if (f.function == fn || has(f.function, std::string(".").append(fn))) return true;
      }
      continue;
    }
    // The innermost frame of the job's own code: what its line calls.
    const std::string* text = s.line_text(f);
    if (text == nullptr) return false;
    if (line_syncs(*text)) return true;  // waits for the GPU
    for (std::string_view w :
         {"sleep(", ".wait(", ".get(", ".join(", "acquire(", ".recv(", "select(", ".poll(", "input(", ".result("}) {
      if (has(*text, w)) return true;
    }
    return false;
  }
  return false;
}

namespace {

// Thread `ti`'s time wanting the GIL per tick [tick_ns[k-1], tick_ns[k]): its segments on
// stacks that do not wait, within [start_ns, end_ns). `waits` caches stack_waits per stack.
std::vector<double> want_per_tick(const samples::PyStacks& s, int32_t ti, const std::vector<int64_t>& tick_ns,
                                  int64_t start_ns, int64_t end_ns, std::map<int32_t, bool>& waits) {
  std::vector<double> want(tick_ns.size(), 0.0);
  for (const auto& g : s.segments) {
    if (g.thread != ti) continue;
    auto w = waits.find(g.stack);
    if (w == waits.end()) w = waits.emplace(g.stack, stack_waits(s, s.stacks[g.stack])).first;
    if (w->second) continue;
    const int64_t a = std::max(g.start_ns, start_ns), b = std::min(g.end_ns, end_ns);
    if (b <= a) continue;
    auto k = std::upper_bound(tick_ns.begin(), tick_ns.end(), a) - tick_ns.begin();
    for (int64_t x = a; x < b && static_cast<size_t>(k) < tick_ns.size(); ++k) {
      const int64_t y = std::min(b, tick_ns[k]);
      want[k] += static_cast<double>(y - x) / 1e9;
      x = y;
    }
  }
  return want;
}

// Splits the time a thread wanted the GIL into running and waiting, from its CPU in each
// tick (its reading at the tick's end covers the tick).
void split_want(const samples::Series& cpu, const std::vector<int64_t>& tick_ns, const std::vector<double>& want,
                GilThread& gt) {
  size_t j = 0;
  for (size_t k = 1; k < tick_ns.size(); ++k) {
    if (want[k] <= 0) continue;
    while (j < cpu.size() && cpu.time_ns[j] < tick_ns[k]) ++j;
    if (j >= cpu.size() || cpu.time_ns[j] != tick_ns[k] || !cpu.valid[j]) continue;  // not visited
    const double len = static_cast<double>(tick_ns[k] - tick_ns[k - 1]) / 1e9;
    const double run = std::clamp(cpu.values[j] / 100.0, 0.0, 1.0) * len;
    gt.want_s += want[k];
    gt.run_s += std::min(run, want[k]);
    gt.wait_s += std::max(0.0, want[k] - run);
  }
}

}  // namespace

std::vector<GilProcess> gil_waiting(const samples::PyStacks& s, const samples::SampleStore& st,
                                    const std::vector<int64_t>& tick_ns, int64_t start_ns, int64_t end_ns) {
  std::map<int64_t, GilProcess> procs;
  std::map<int32_t, bool> waits;
  for (size_t ti = 0; ti < s.threads.size(); ++ti) {
    const samples::PyThread& t = s.threads[ti];
    if (t.tid == 0) continue;
    const samples::Series* cpu = st.find(samples::MetricId::kThreadCpuPct, samples::Entity::thread(t.pid, t.tid));
    if (cpu == nullptr) continue;
    const std::vector<double> want = want_per_tick(s, static_cast<int32_t>(ti), tick_ns, start_ns, end_ns, waits);
    GilThread gt;
    gt.tid = t.tid;
    gt.name = t.name;
    split_want(*cpu, tick_ns, want, gt);
    if (gt.want_s <= 0) continue;
    GilProcess& p = procs[t.pid];
    p.pid = t.pid;
    p.want_s += gt.want_s;
    p.wait_s += gt.wait_s;
    p.threads.push_back(std::move(gt));
  }
  std::vector<GilProcess> out;
  for (auto& [pid, p] : procs) {
    if (p.threads.size() < 2) continue;
    std::sort(p.threads.begin(), p.threads.end(),
              [](const GilThread& a, const GilThread& b) { return a.wait_s > b.wait_s; });
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const GilProcess& a, const GilProcess& b) { return a.wait_s > b.wait_s; });
  return out;
}

}  // namespace chokepoint::analyses
