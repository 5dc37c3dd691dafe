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
  for (std::string_view s : {".item()", ".cpu()", ".tolist()", ".numpy()", "synchronize(", ".to(\"cpu\")", ".to('cpu')"}) {
    if (has(t, s)) return true;
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
  }
  return "other";
}

HostClass classify_stack(const samples::PyStacks& s, const std::vector<int32_t>& stack, const std::string& text) {
  // The line's own text first: `loss.item()` inside a logging call is a sync.
  if (line_syncs(text)) return HostClass::kSync;
  bool data = false, optim = false, logging = false, ckpt = false, framework = false, sync = false;
  for (int32_t id : stack) {
    const samples::PyFrame& f = s.frames[id];
    if (lib_has(f, "torch/cuda/__init__") && f.function.find("synchronize") != std::string::npos) sync = true;
    if (lib_has(f, "torch/_tensor_str")) sync = true;  // printing a tensor copies it to the host
    // A trace's built-in calls (torch.profiler with_stack): the sync itself.
    if (f.file == "<built-in>") {
      for (std::string_view w : {"item", "cpu", "tolist", "numpy", "_cuda_synchronize", "synchronize", "_local_scalar_dense"}) {
        if (f.function == w) sync = true;
      }
    }
    if (lib_has(f, "torch/serialization") || lib_has(f, "safetensors") || lib_has(f, "torch/distributed/checkpoint")) ckpt = true;
    if (lib_has(f, "torch/utils/data/") || lib_has(f, "numpy/lib/npyio") || lib_has(f, "numpy/_core/memmap") ||
        lib_has(f, "numpy/core/memmap") || lib_has(f, "/PIL/") || lib_has(f, "torchvision/transforms") ||
        lib_has(f, "torchvision/datasets") || lib_has(f, "torchvision/io") || lib_has(f, "/datasets/")) {
      data = true;
    }
    if (lib_has(f, "torch/optim/") || lib_has(f, "torch/nn/utils/clip_grad") ||
        (f.function.find("zero_grad") != std::string::npos)) {
      optim = true;
    }
    if (lib_has(f, "/logging/") || lib_has(f, "/tqdm/") || lib_has(f, "tensorboard") || lib_has(f, "/wandb/") ||
        lib_has(f, "/torchmetrics/")) {
      logging = true;
    }
    if (lib_has(f, "torch/nn/modules/") || lib_has(f, "torch/autograd/") || lib_has(f, "torch/_tensor.py") ||
        lib_has(f, "torch/_dynamo/") || lib_has(f, "torch/_inductor/") || lib_has(f, "torch/amp/") ||
        lib_has(f, "torch/_ops.py") || lib_has(f, "torch/nn/functional")) {
      framework = true;
    }
    // The job's own functions, by name.
    if (!samples::is_library_file(f.file)) {
      const std::string fn = lower(f.function);
      for (std::string_view w : {"get_batch", "load", "collate", "decode", "read_", "prefetch", "next_batch", "augment"}) {
        if (has(fn, w)) data = true;
      }
      for (std::string_view w : {"save_checkpoint", "checkpoint"}) {
        if (has(fn, w)) ckpt = true;
      }
      if (fn == "log" || has(fn, "log_") || has(fn, "_log") || has(fn, "metric")) logging = true;
    }
  }
  if (sync) return HostClass::kSync;
  if (ckpt) return HostClass::kCheckpoint;
  if (data) return HostClass::kData;
  if (optim) return HostClass::kOptimizer;
  if (logging) return HostClass::kLogging;
  if (has(text, "print(") || has(text, "logger.") || has(text, "logging.")) return HostClass::kLogging;
  if (framework) return HostClass::kFramework;
  return HostClass::kOther;
}

HostAttribution attribute_host_time(const AttributionInput& in) {
  HostAttribution out;
  out.method = in.method;
  if (in.stacks == nullptr || in.window_end_ns <= in.window_start_ns) return out;
  const samples::PyStacks& s = *in.stacks;
  const int64_t wa = in.window_start_ns, wb = in.window_end_ns;
  out.window_s = static_cast<double>(wb - wa) / 1e9;

  // The launching threads.
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
    if (pick) {
      launch.insert(static_cast<int32_t>(i));
      if (!out.thread.empty()) out.thread += ", ";
      out.thread += (t.name.empty() ? "thread " + std::to_string(t.tid) : t.name) + " of pid " + std::to_string(t.pid);
    }
  }

  for (const IdleCell& c : in.idle) {
    const int64_t a = std::max(c.start_ns, wa), b = std::min(c.end_ns, wb);
    if (b > a) out.gpu_idle_s += static_cast<double>(b - a) / 1e9 * c.idle;
  }

  // Per stack: idle time charged, time on thread.
  struct Acc {
    double idle = 0, on = 0;
  };
  std::map<int32_t, Acc> by_stack;
  std::map<int32_t, HostClass> cls_of;
  auto innermost_user = [&](int32_t stack) -> const samples::PyFrame* {
    for (int32_t id : s.stacks[stack]) {
      if (!samples::is_library_file(s.frames[id].file)) return &s.frames[id];
    }
    return nullptr;
  };
  auto cls = [&](int32_t stack) {
    auto it = cls_of.find(stack);
    if (it != cls_of.end()) return it->second;
    const samples::PyFrame* u = innermost_user(stack);
    const std::string* text = u != nullptr ? s.line_text(*u) : nullptr;
    const HostClass c = classify_stack(s, s.stacks[stack], text ? *text : std::string());
    cls_of[stack] = c;
    return c;
  };

  // Segments of the launching threads, in time order (threads interleaved).
  std::vector<const samples::PyStackSegment*> segs;
  for (const auto& g : s.segments) {
    if (launch.count(g.thread) && g.end_ns > wa && g.start_ns < wb) segs.push_back(&g);
  }
  std::sort(segs.begin(), segs.end(), [](auto* x, auto* y) { return x->start_ns < y->start_ns; });
  for (const auto* g : segs) {
    by_stack[g->stack].on += static_cast<double>(std::min(g->end_ns, wb) - std::max(g->start_ns, wa)) / 1e9;
  }

  // Idle cells against the segments: a sweep (both sorted by start).
  size_t first = 0;
  for (const IdleCell& c : in.idle) {
    const int64_t a = std::max(c.start_ns, wa), b = std::min(c.end_ns, wb);
    if (b <= a) continue;
    while (first < segs.size() && segs[first]->end_ns <= a - 50'000'000) ++first;  // keep 50 ms of look-back
    // A trace's idle interval that starts while the thread is in a sync line: the sync
    // drained the GPU, and the whole gap is its cost.
    if (c.idle >= 1.0) {
      const samples::PyStackSegment* at_start = nullptr;
      for (size_t k = first; k < segs.size() && segs[k]->start_ns < a; ++k) {
        if (segs[k]->end_ns >= a - 20'000'000) at_start = segs[k];
      }
      if (at_start != nullptr && cls(at_start->stack) == HostClass::kSync) {
        by_stack[at_start->stack].idle += static_cast<double>(b - a) / 1e9;
        out.covered_idle_s += static_cast<double>(b - a) / 1e9;
        continue;
      }
    }
    for (size_t k = first; k < segs.size() && segs[k]->start_ns < b; ++k) {
      const int64_t x = std::max(a, segs[k]->start_ns), y = std::min(b, segs[k]->end_ns);
      if (y <= x) continue;
      const double t = static_cast<double>(y - x) / 1e9 * c.idle;
      by_stack[segs[k]->stack].idle += t;
      out.covered_idle_s += t;
    }
  }

  // Aggregate stacks by the innermost user frame (and class).
  std::map<std::pair<samples::PyFrame, int>, HotSpot> spots;
  for (const auto& [stack, acc] : by_stack) {
    const samples::PyFrame* u = innermost_user(stack);
    const HostClass c = cls(stack);
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
    out.idle_by_class[static_cast<int>(c)] += acc.idle;
  }
  for (auto& [k, h] : spots) out.spots.push_back(std::move(h));
  std::sort(out.spots.begin(), out.spots.end(), [](const HotSpot& x, const HotSpot& y) {
    return x.idle_s != y.idle_s ? x.idle_s > y.idle_s : x.on_thread_s > y.on_thread_s;
  });
  return out;
}

}  // namespace chokepoint::analyses
