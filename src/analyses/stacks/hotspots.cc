#include "analyses/stacks/hotspots.h"

#include <algorithm>
#include <map>
#include <set>

namespace chokepoint::analyses {

namespace {

bool has(std::string_view s, std::string_view sub) { return s.find(sub) != std::string_view::npos; }

bool lib_has(const samples::PyFrame& f, std::string_view sub) { return has(f.file, sub); }

}  // namespace

bool line_syncs(std::string_view t) {
  for (std::string_view s :
       {".item()", ".cpu()", ".tolist()", ".numpy()", "synchronize(", ".to(\"cpu\")", ".to('cpu')"}) {
    if (has(t, s)) return true;
  }
  return false;
}

bool line_copies_to_gpu(std::string_view t) {
  if (has(t, ".cuda(") || has(t, "copy_(")) return true;
  for (size_t at = t.find(".to("); at != std::string_view::npos; at = t.find(".to(", at + 4)) {
    const std::string_view args = t.substr(at + 4, t.find(')', at) - at - 4);
    for (std::string_view w : {"cuda", "dev", "gpu", "non_blocking"}) {
      if (has(args, w)) return true;
    }
  }
  return false;
}

namespace {

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

}  // namespace

std::string_view host_class_name(HostClass c) {
  switch (c) {
    case HostClass::kSync: return "sync";
    case HostClass::kData: return "data loading";
    case HostClass::kOptimizer: return "optimizer";
    case HostClass::kLogging: return "logging";
    case HostClass::kCheckpoint: return "checkpointing";
    case HostClass::kFramework: return "framework";
    case HostClass::kOther: return "other";
    case HostClass::kTransfer: return "copying to the GPU";
    case HostClass::kWait: return "waiting on threads";
  }
  return "other";
}

namespace {

// What the frames of one stack do, accumulated frame by frame.
struct StackTraits {
  bool data = false, optim = false, logging = false, ckpt = false, framework = false, sync = false, wait = false;
};

// A library frame that waits for other threads or processes.
bool frame_waits(const samples::PyFrame& f) {
  for (std::string_view m :
       {"threading.py", "/queue.py", "concurrent/futures/", "multiprocessing/", "selectors.py", "subprocess.py"}) {
    if (lib_has(f, m)) return true;
  }
  return false;
}

// A frame that waits for the GPU: torch.cuda.synchronize, printing a tensor, or one of a
// trace's built-in calls (torch.profiler with_stack) that is the sync itself.
bool frame_syncs(const samples::PyFrame& f) {
  if (lib_has(f, "torch/cuda/__init__") && f.function.find("synchronize") != std::string::npos) return true;
  if (lib_has(f, "torch/_tensor_str")) return true;  // printing a tensor copies it to the host
  if (f.file == "<built-in>") {
    for (std::string_view w :
         {"item", "cpu", "tolist", "numpy", "_cuda_synchronize", "synchronize", "_local_scalar_dense"}) {
      if (f.function == w) return true;
    }
  }
  return false;
}

// The traits a frame shows by the file it is in (torch, numpy, PIL, logging, ...).
void note_frame_file(const samples::PyFrame& f, StackTraits& t) {
  if (frame_syncs(f)) t.sync = true;
  if (lib_has(f, "torch/serialization") || lib_has(f, "safetensors") || lib_has(f, "torch/distributed/checkpoint"))
    t.ckpt = true;
  if (lib_has(f, "torch/utils/data/") || lib_has(f, "numpy/lib/npyio") || lib_has(f, "numpy/_core/memmap") ||
      lib_has(f, "numpy/core/memmap") || lib_has(f, "/PIL/") || lib_has(f, "torchvision/transforms") ||
      lib_has(f, "torchvision/datasets") || lib_has(f, "torchvision/io") || lib_has(f, "/datasets/")) {
    t.data = true;
  }
  if (lib_has(f, "torch/optim/") || lib_has(f, "torch/nn/utils/clip_grad") ||
      (f.function.find("zero_grad") != std::string::npos)) {
    t.optim = true;
  }
  if (lib_has(f, "/logging/") || lib_has(f, "/tqdm/") || lib_has(f, "tensorboard") || lib_has(f, "/wandb/") ||
      lib_has(f, "/torchmetrics/")) {
    t.logging = true;
  }
  if (lib_has(f, "torch/nn/modules/") || lib_has(f, "torch/autograd/") || lib_has(f, "torch/_tensor.py") ||
      lib_has(f, "torch/_dynamo/") || lib_has(f, "torch/_inductor/") || lib_has(f, "torch/amp/") ||
      lib_has(f, "torch/_ops.py") || lib_has(f, "torch/nn/functional")) {
    t.framework = true;
  }
}

// The traits a function of the job's own code shows by its name.
void note_own_function(const samples::PyFrame& f, StackTraits& t) {
  const std::string fn = lower(f.function);
  for (std::string_view w : {"get_batch", "load", "collate", "decode", "read_", "prefetch", "next_batch", "augment"}) {
    if (has(fn, w)) t.data = true;
  }
  for (std::string_view w : {"save_checkpoint", "checkpoint"}) {
    if (has(fn, w)) t.ckpt = true;
  }
  if (fn == "log" || has(fn, "log_") || has(fn, "_log") || has(fn, "metric")) t.logging = true;
}

}  // namespace

HostClass classify_stack(const samples::PyStacks& s, const std::vector<int32_t>& stack, const std::string& text) {
  // The innermost frames up to the job's own line: a trace's <built-in> calls are the
  // line's own native calls; library Python in between means the time is in the library.
  size_t user = stack.size();
  bool leaf_is_line = true;
  for (size_t i = 0; i < stack.size(); ++i) {
    const samples::PyFrame& f = s.frames[stack[i]];
    if (!samples::is_library_file(f.file)) {
      user = i;
      break;
    }
    if (f.file != "<built-in>") leaf_is_line = false;
  }
  leaf_is_line = leaf_is_line && user < stack.size();
  // The line's own text, when the time is in the line's own native calls: `loss.item()`
  // inside a logging call is a sync; `x.to(device)` holding the thread is a blocking copy.
  if (leaf_is_line && line_syncs(text)) return HostClass::kSync;
  StackTraits t;
  for (size_t i = 0; i < stack.size(); ++i) {
    const samples::PyFrame& f = s.frames[stack[i]];
    note_frame_file(f, t);
    if (i < user && frame_waits(f)) t.wait = true;                   // innermost library frames only
    if (!samples::is_library_file(f.file)) note_own_function(f, t);  // the job's own functions, by name
  }
  if (t.sync) return HostClass::kSync;
  if (t.ckpt) return HostClass::kCheckpoint;
  if (t.data) return HostClass::kData;
  if (t.wait) return HostClass::kWait;
  if (leaf_is_line && line_copies_to_gpu(text)) return HostClass::kTransfer;
  if (t.optim) return HostClass::kOptimizer;
  if (t.logging) return HostClass::kLogging;
  if (has(text, "print(") || has(text, "logger.") || has(text, "logging.")) return HostClass::kLogging;
  if (t.framework) return HostClass::kFramework;
  return HostClass::kOther;
}

namespace {

// Per stack: idle time charged, time on thread.
struct StackTime {
  double idle = 0, on = 0;
};

// The launching threads' indexes in `s.threads`.
std::set<int32_t> launching_threads(const AttributionInput& in) {
  const samples::PyStacks& s = *in.stacks;
  std::set<int32_t> launch;
  const std::set<int64_t> excluded(in.exclude_pids.begin(), in.exclude_pids.end());
  for (size_t i = 0; i < s.threads.size(); ++i) {
    const auto& t = s.threads[i];
    bool pick = false;
    if (!in.launch_threads.empty()) {
      pick = std::find(in.launch_threads.begin(), in.launch_threads.end(), std::make_pair(t.pid, t.tid)) !=
             in.launch_threads.end();
    } else {
      pick = !excluded.count(t.pid) && (t.tid == t.pid || (t.tid == 0 && t.name == "MainThread"));
    }
    if (pick) launch.insert(static_cast<int32_t>(i));
  }
  return launch;
}

std::string thread_names(const samples::PyStacks& s, const std::set<int32_t>& threads) {
  std::string names;
  for (int32_t i : threads) {
    const auto& t = s.threads[i];
    if (!names.empty()) names += ", ";
    names += (t.name.empty() ? "thread " + std::to_string(t.tid) : t.name) + " of pid " + std::to_string(t.pid);
  }
  return names;
}

// Each stack's innermost frame of the job's own code and class, the class computed once.
class StackClasses {
 public:
  explicit StackClasses(const samples::PyStacks& s) : s_(s) {}

  const samples::PyFrame* innermost_user(int32_t stack) const {
    for (int32_t id : s_.stacks[stack]) {
      if (!samples::is_library_file(s_.frames[id].file)) return &s_.frames[id];
    }
    return nullptr;
  }

  HostClass of(int32_t stack) {
    auto it = cls_of_.find(stack);
    if (it != cls_of_.end()) return it->second;
    const samples::PyFrame* u = innermost_user(stack);
    const std::string* text = u != nullptr ? s_.line_text(*u) : nullptr;
    const HostClass c = classify_stack(s_, s_.stacks[stack], text ? *text : std::string());
    cls_of_[stack] = c;
    return c;
  }

 private:
  const samples::PyStacks& s_;
  std::map<int32_t, HostClass> cls_of_;
};

// A launching thread that spent at least half of the window waiting on other threads
// (join, a lock, a queue) launched little itself: the threads of its process that ran
// Python for at least a tenth of the window take its place, so the GPU's idle time is
// charged to what they were doing. gil_join (tests/data/workloads/misreads.py): the main
// thread sat in `t.join(); torch.cuda.synchronize()` while four threads launched the GPU
// work; its idle time was read as a sync (issue 42). Only when the launching threads are
// guessed (main threads), not when a trace says which threads launched.
constexpr double kWaitingShare = 0.5;
constexpr double kStandInShare = 0.1;

std::set<int32_t> hand_over_waiting(const samples::PyStacks& s, StackClasses& classes, std::set<int32_t> launch,
                                    int64_t wa, int64_t wb, std::string& waiting) {
  std::map<int32_t, double> waited, ran;  // per thread, seconds in the window
  for (const auto& g : s.segments) {
    if (g.end_ns <= wa || g.start_ns >= wb) continue;
    const double t = static_cast<double>(std::min(g.end_ns, wb) - std::max(g.start_ns, wa)) / 1e9;
    (classes.of(g.stack) == HostClass::kWait ? waited : ran)[g.thread] += t;
  }
  const double window = static_cast<double>(wb - wa) / 1e9;
  std::set<int32_t> out, gave_way;
  for (int32_t th : launch) {
    std::set<int32_t> stand_ins;
    if (waited[th] >= kWaitingShare * window) {
      for (size_t k = 0; k < s.threads.size(); ++k) {
        const auto i = static_cast<int32_t>(k);
        if (i != th && s.threads[k].pid == s.threads[th].pid && ran[i] >= kStandInShare * window) stand_ins.insert(i);
      }
    }
    if (stand_ins.empty()) {
      out.insert(th);
    } else {
      out.insert(stand_ins.begin(), stand_ins.end());
      gave_way.insert(th);
    }
  }
  waiting = thread_names(s, gave_way);
  return out;
}

// The sweep of idle cells against the launching threads' segments (both sorted by start).
struct IdleCharger {
  const std::vector<const samples::PyStackSegment*>& segs;
  StackClasses& classes;
  std::map<int32_t, StackTime>& by_stack;
  double& covered_idle_s;
  size_t first = 0;

  // Charges the idle part of [a, b) (idle share `idle`) to the stacks on thread then.
  void charge(int64_t a, int64_t b, double idle) {
    while (first < segs.size() && segs[first]->end_ns <= a - 50'000'000) ++first;  // keep 50 ms of look-back
    if (idle >= 1.0 && charge_to_sync(a, b)) return;
    for (size_t k = first; k < segs.size() && segs[k]->start_ns < b; ++k) {
      const int64_t x = std::max(a, segs[k]->start_ns), y = std::min(b, segs[k]->end_ns);
      if (y <= x) continue;
      const double t = static_cast<double>(y - x) / 1e9 * idle;
      by_stack[segs[k]->stack].idle += t;
      covered_idle_s += t;
    }
  }

  // A trace's idle interval that starts while the thread is in a sync line: the sync
  // drained the GPU, and the whole gap is its cost. False when no sync is at its start.
  bool charge_to_sync(int64_t a, int64_t b) {
    const samples::PyStackSegment* at_start = nullptr;
    for (size_t k = first; k < segs.size() && segs[k]->start_ns < a; ++k) {
      if (segs[k]->end_ns >= a - 20'000'000) at_start = segs[k];
    }
    if (at_start == nullptr || classes.of(at_start->stack) != HostClass::kSync) return false;
    by_stack[at_start->stack].idle += static_cast<double>(b - a) / 1e9;
    covered_idle_s += static_cast<double>(b - a) / 1e9;
    return true;
  }
};

// Aggregates stacks by the innermost user frame (and class) into `out.spots` and
// `out.idle_by_class`, largest idle first.
void aggregate_spots(const samples::PyStacks& s, StackClasses& classes, const std::map<int32_t, StackTime>& by_stack,
                     HostAttribution& out) {
  std::map<std::pair<samples::PyFrame, int>, HotSpot> spots;
  for (const auto& [stack, acc] : by_stack) {
    const samples::PyFrame* u = classes.innermost_user(stack);
    const HostClass c = classes.of(stack);
    samples::PyFrame key = u != nullptr ? *u : samples::PyFrame{};
    HotSpot& h = spots[{key, static_cast<int>(c)}];
    if (h.idle_s == 0 && h.on_thread_s == 0) {
      h.frame = key;
      h.cls = c;
      if (const std::string* t = u != nullptr ? s.line_text(*u) : nullptr) h.text = *t;
    }
    // The innermost frame of the stack that holds the most idle time names what it does.
    if (!s.stacks[stack].empty() && acc.idle >= h.idle_s / 2) h.inner = s.frames[s.stacks[stack].front()].function;
    h.idle_s += acc.idle;
    h.on_thread_s += acc.on;
    if (u != nullptr && u == &s.frames[s.stacks[stack].front()]) {  // the line itself was running
      h.own_idle_s += acc.idle;
      h.own_on_thread_s += acc.on;
    }
    out.idle_by_class[static_cast<int>(c)] += acc.idle;
    if (std::any_of(s.stacks[stack].begin(), s.stacks[stack].end(),
                    [&](int32_t id) { return lib_has(s.frames[id], "torch/utils/data/"); })) {
      out.dataloader_idle_s += acc.idle;
    }
  }
  for (auto& [k, h] : spots) out.spots.push_back(std::move(h));
  std::sort(out.spots.begin(), out.spots.end(), [](const HotSpot& x, const HotSpot& y) {
    return x.idle_s != y.idle_s ? x.idle_s > y.idle_s : x.on_thread_s > y.on_thread_s;
  });
}

}  // namespace

const HotSpot* HostAttribution::top_own(const std::vector<HostClass>& classes) const {
  const HotSpot* best = nullptr;
  for (const HotSpot& h : spots) {
    if (h.frame.file.empty() || h.own_on_thread_s <= 0) continue;
    if (!classes.empty() && std::find(classes.begin(), classes.end(), h.cls) == classes.end()) continue;
    if (best == nullptr || h.own_on_thread_s > best->own_on_thread_s) best = &h;
  }
  return best;
}

bool own_time_shown(const HostAttribution& a, const HotSpot& h) {
  return a.window_s > 0 && !h.frame.file.empty() && h.own_on_thread_s >= 0.01 * a.window_s;
}

std::vector<const HotSpot*> spots_to_show(const HostAttribution& a, size_t by_idle, size_t by_own) {
  std::vector<const HotSpot*> out;
  if (a.no_gpu_work()) {
    for (const HotSpot& h : a.spots) {
      if (h.on_thread_s > 0) out.push_back(&h);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const HotSpot* x, const HotSpot* y) { return x->on_thread_s > y->on_thread_s; });
    if (out.size() > by_idle + by_own) out.resize(by_idle + by_own);
    return out;
  }
  for (size_t i = 0; i < a.spots.size() && out.size() < by_idle; ++i) {
    if (a.spots[i].idle_s > 0) out.push_back(&a.spots[i]);
  }
  std::vector<const HotSpot*> own;
  for (size_t i = out.size(); i < a.spots.size(); ++i) {
    const HotSpot& h = a.spots[i];
    if (h.cls != HostClass::kFramework && own_time_shown(a, h)) own.push_back(&h);
  }
  std::stable_sort(own.begin(), own.end(),
                   [](const HotSpot* x, const HotSpot* y) { return x->own_on_thread_s > y->own_on_thread_s; });
  if (own.size() > by_own) own.resize(by_own);
  out.insert(out.end(), own.begin(), own.end());
  return out;
}

HostAttribution attribute_host_time(const AttributionInput& in) {
  HostAttribution out;
  out.method = in.method;
  if (in.stacks == nullptr || in.window_end_ns <= in.window_start_ns) return out;
  const samples::PyStacks& s = *in.stacks;
  const int64_t wa = in.window_start_ns, wb = in.window_end_ns;
  out.window_s = static_cast<double>(wb - wa) / 1e9;

  StackClasses classes(s);
  std::set<int32_t> launch = launching_threads(in);
  if (in.launch_threads.empty()) launch = hand_over_waiting(s, classes, std::move(launch), wa, wb, out.waiting_thread);
  out.thread = thread_names(s, launch);

  for (const IdleCell& c : in.idle) {
    const int64_t a = std::max(c.start_ns, wa), b = std::min(c.end_ns, wb);
    if (b > a) out.gpu_idle_s += static_cast<double>(b - a) / 1e9 * c.idle;
  }

  // Segments of the launching threads, in time order (threads interleaved).
  std::vector<const samples::PyStackSegment*> segs;
  for (const auto& g : s.segments) {
    if (launch.count(g.thread) && g.end_ns > wa && g.start_ns < wb) segs.push_back(&g);
  }
  std::sort(segs.begin(), segs.end(), [](auto* x, auto* y) { return x->start_ns < y->start_ns; });
  std::map<int32_t, StackTime> by_stack;
  for (const auto* g : segs) {
    by_stack[g->stack].on += static_cast<double>(std::min(g->end_ns, wb) - std::max(g->start_ns, wa)) / 1e9;
  }

  IdleCharger charger{segs, classes, by_stack, out.covered_idle_s};
  for (const IdleCell& c : in.idle) {
    const int64_t a = std::max(c.start_ns, wa), b = std::min(c.end_ns, wb);
    if (b > a) charger.charge(a, b, c.idle);
  }

  aggregate_spots(s, classes, by_stack, out);
  return out;
}

}  // namespace chokepoint::analyses
