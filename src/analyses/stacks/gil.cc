#include "analyses/stacks/gil.h"

#include "analyses/stacks/hotspots.h"

#include <algorithm>
#include <climits>
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

// One thread's sampled time within [start_ns, end_ns): when its stacks were sampled at all,
// and when they were in Python code (wanting the GIL).
struct Sampled {
  int64_t first_ns = 0, last_ns = 0;              // the span its stacks cover
  std::vector<std::pair<int64_t, int64_t>> want;  // [start, end) in time order
  std::vector<double> before;                     // want seconds before want[i]
  double want_s = 0;

  // Seconds it wanted the GIL within [a, b).
  double want_in(int64_t a, int64_t b) const { return upto(b) - upto(a); }
  double upto(int64_t t) const {
    const auto i = std::upper_bound(want.begin(), want.end(), std::make_pair(t, INT64_MAX)) - want.begin();
    if (i == 0) return 0;
    const auto& [x, y] = want[i - 1];
    return before[i - 1] + static_cast<double>(std::min(t, y) - x) / 1e9;
  }
};

// `waits` caches stack_waits per stack.
Sampled sampled(const samples::PyStacks& s, int32_t ti, int64_t start_ns, int64_t end_ns,
                std::map<int32_t, bool>& waits) {
  Sampled out;
  out.first_ns = end_ns;
  out.last_ns = start_ns;
  for (const auto& g : s.segments) {
    if (g.thread != ti) continue;
    const int64_t a = std::max(g.start_ns, start_ns), b = std::min(g.end_ns, end_ns);
    if (b <= a) continue;
    out.first_ns = std::min(out.first_ns, a);
    out.last_ns = std::max(out.last_ns, b);
    auto w = waits.find(g.stack);
    if (w == waits.end()) w = waits.emplace(g.stack, stack_waits(s, s.stacks[g.stack])).first;
    if (w->second) continue;
    out.before.push_back(out.want_s);
    out.want.emplace_back(a, b);
    out.want_s += static_cast<double>(b - a) / 1e9;
  }
  return out;
}

// Sets the thread's CPU time over the span its stacks cover, and the time it wanted the GIL
// and was off the CPU: each CPU reading is the rate over the thread's own visit interval
// (the sampler visits threads in round robin, sampler/proc/process_sampler.h), set against
// the want within that interval. The first reading's interval is taken as long as the next.
void split_want(const samples::Series& cpu, const Sampled& sm, GilThread& gt, double& off_cpu_s) {
  int64_t prev = -1;
  for (size_t j = 0; j < cpu.size(); ++j) {
    if (!cpu.valid[j]) continue;
    const int64_t b = cpu.time_ns[j];
    int64_t a = prev;
    if (a < 0) {
      for (size_t n = j + 1; n < cpu.size() && a < 0; ++n)
        if (cpu.valid[n]) a = b - (cpu.time_ns[n] - b);
    }
    prev = b;
    const int64_t x = std::max(a, sm.first_ns), y = std::min(b, sm.last_ns);
    if (a < 0 || y <= x) continue;
    const double ran = std::max(0.0, cpu.values[j] / 100.0) * static_cast<double>(y - x) / 1e9;
    gt.cpu_s += ran;
    off_cpu_s += std::max(0.0, sm.want_in(x, y) - ran);
  }
}

}  // namespace

std::vector<GilProcess> gil_waiting(const samples::PyStacks& s, const samples::SampleStore& st, int64_t start_ns,
                                    int64_t end_ns) {
  struct Cand {
    GilThread t;
    double off_cpu_s = 0;
  };
  std::map<int64_t, std::vector<Cand>> procs;
  std::map<int32_t, bool> waits;
  for (size_t ti = 0; ti < s.threads.size(); ++ti) {
    const samples::PyThread& t = s.threads[ti];
    if (t.tid == 0) continue;
    const samples::Series* cpu = st.find(samples::MetricId::kThreadCpuPct, samples::Entity::thread(t.pid, t.tid));
    if (cpu == nullptr) continue;
    const Sampled sm = sampled(s, static_cast<int32_t>(ti), start_ns, end_ns, waits);
    if (sm.want_s <= 0) continue;
    Cand c;
    c.t.tid = t.tid;
    c.t.name = t.name;
    c.t.want_s = sm.want_s;
    split_want(*cpu, sm, c.t, c.off_cpu_s);
    procs[t.pid].push_back(std::move(c));
  }
  std::vector<GilProcess> out;
  for (auto& [pid, cands] : procs) {
    if (cands.size() < 2) continue;
    // A thread waits for the GIL only while another holds it, and a thread holds it only
    // on the CPU: its wait is at most the other Python threads' CPU time (an upper bound:
    // native code that released the GIL counts too).
    double cpu_s = 0;
    for (const Cand& c : cands) cpu_s += c.t.cpu_s;
    GilProcess p;
    p.pid = pid;
    for (Cand& c : cands) {
      c.t.wait_s = std::min(c.off_cpu_s, cpu_s - c.t.cpu_s);
      c.t.run_s = c.t.want_s - c.t.wait_s;
      p.want_s += c.t.want_s;
      p.wait_s += c.t.wait_s;
      p.threads.push_back(std::move(c.t));
    }
    std::sort(p.threads.begin(), p.threads.end(),
              [](const GilThread& a, const GilThread& b) { return a.wait_s > b.wait_s; });
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const GilProcess& a, const GilProcess& b) { return a.wait_s > b.wait_s; });
  return out;
}

}  // namespace chokepoint::analyses
