#include "analyses/stacks/hotspots.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

namespace chokepoint::analyses {
namespace {

constexpr int64_t kMs = 1'000'000;

// A main thread (pid 10) and a DataLoader worker (pid 11), built by hand.
struct Fixture {
  samples::PyStacks s;
  int32_t frame(std::string fn, std::string file, int line) {
    s.frames.push_back({std::move(fn), std::move(file), line});
    return static_cast<int32_t>(s.frames.size() - 1);
  }
  int32_t stack(std::vector<int32_t> inner_first) {
    s.stacks.push_back(std::move(inner_first));
    return static_cast<int32_t>(s.stacks.size() - 1);
  }
  void seg(int32_t th, int32_t st, int64_t a_ms, int64_t b_ms) {
    s.segments.push_back({th, st, a_ms * kMs, b_ms * kMs});
  }
};

Fixture loop_with_item_and_loader() {
  Fixture f;
  f.s.threads = {{10, 10, "MainThread"}, {11, 11, "MainThread"}};
  const int32_t main = f.frame("<module>", "train.py", 200);
  const int32_t loop = f.frame("train", "train.py", 120);  // `for x, y in loader:`
  const int32_t next = f.frame("__next__", "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", 630);
  const int32_t item_line = f.frame("train", "train.py", 131);  // `total += loss.item()`
  const int32_t fwd_line = f.frame("train", "train.py", 125);
  const int32_t fwd = f.frame("_call_impl", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 1750);
  const int32_t worker = f.frame("fetch", "/usr/lib/python3/dist-packages/torch/utils/data/_utils/fetch.py", 52);
  f.s.source_lines["train.py:131"] = "total += loss.item()";
  f.s.source_lines["train.py:120"] = "for x, y in loader:";
  const int32_t waiting = f.stack({next, loop, main});
  const int32_t item = f.stack({item_line, main});
  const int32_t forward = f.stack({fwd, fwd_line, main});
  const int32_t in_worker = f.stack({worker});
  // Per 100 ms iteration: 30 ms waiting for the loader, 50 ms forward, 20 ms in .item().
  for (int i = 0; i < 10; ++i) {
    const int64_t t = i * 100;
    f.seg(0, waiting, t, t + 30);
    f.seg(0, forward, t + 30, t + 80);
    f.seg(0, item, t + 80, t + 100);
    f.seg(1, in_worker, t, t + 100);
  }
  return f;
}

TEST(HostHotspots, TraceIdleGoesToTheLineTheThreadWasOn) {
  Fixture f = loop_with_item_and_loader();
  AttributionInput in;
  in.stacks = &f.s;
  in.window_start_ns = 0;
  in.window_end_ns = 1000 * kMs;
  in.exclude_pids = {11};
  // The GPU idles while the loader is waited for (0-30 of each iteration) and for 5 ms after
  // each .item() returns (a sync drains the queue: idle starts while the thread is there).
  for (int i = 0; i < 10; ++i) {
    in.idle.push_back({i * 100 * kMs, (i * 100 + 30) * kMs, 1.0});
  }
  in.method = "trace";
  const HostAttribution h = attribute_host_time(in);
  EXPECT_EQ(h.thread, "MainThread of pid 10");  // the worker is not a launching thread
  EXPECT_NEAR(h.gpu_idle_s, 0.30, 1e-9);
  EXPECT_NEAR(h.covered_idle_s, 0.30, 1e-9);
  ASSERT_FALSE(h.spots.empty());
  // Idle from 0: at its start the thread was... in nothing before t=0, then the loader wait;
  // from i>=1 the idle starts right after .item() (a sync line): charged to it whole.
  EXPECT_EQ(h.spots[0].frame.line, 131);
  EXPECT_EQ(h.spots[0].cls, HostClass::kSync);
  EXPECT_EQ(h.spots[0].text, "total += loss.item()");
  EXPECT_NEAR(h.spots[0].idle_s, 0.27, 1e-9);
  EXPECT_NEAR(h.idle_by_class[static_cast<int>(HostClass::kData)], 0.03, 1e-9);
}

// The fixture's second under sampled utilization: ticks of 200 ms at 60%, so 40% of every
// stack's time is GPU idle (the loader worker, pid 11, left out).
AttributionInput sampled_input(const Fixture& f) {
  AttributionInput in;
  in.stacks = &f.s;
  in.window_start_ns = 0;
  in.window_end_ns = 1000 * kMs;
  in.exclude_pids = {11};
  for (int i = 0; i < 5; ++i) in.idle.push_back({i * 200 * kMs, (i + 1) * 200 * kMs, 0.4});
  in.method = "sampled utilization";
  return in;
}

TEST(HostHotspots, SampledUtilizationChargesTheIdleShare) {
  Fixture f = loop_with_item_and_loader();
  const HostAttribution h = attribute_host_time(sampled_input(f));
  EXPECT_NEAR(h.gpu_idle_s, 0.4, 1e-9);
  ASSERT_EQ(h.spots.size(), 3u);
  // Forward (50 ms of each 100) holds half the idle; no sync special case without exact idle.
  EXPECT_EQ(h.spots[0].cls, HostClass::kFramework);
  EXPECT_NEAR(h.spots[0].idle_s, 0.2, 1e-9);
  EXPECT_NEAR(h.spots[0].on_thread_s, 0.5, 1e-9);
  EXPECT_EQ(h.spots[1].cls, HostClass::kData);
  EXPECT_EQ(h.spots[1].frame.line, 120);  // the job's line that waits on the loader
  EXPECT_EQ(h.spots[1].inner, "__next__");
  EXPECT_NEAR(h.idle_share(HostClass::kSync), 0.2 * 0.4 * 1.0 / 0.4, 1e-9);
}

TEST(HostHotspots, OwnTimeIsWhenTheLineItselfIsInnermost) {
  Fixture f = loop_with_item_and_loader();
  const HostAttribution h = attribute_host_time(sampled_input(f));
  const HotSpot* item = nullptr;
  const HotSpot* fwd = nullptr;
  for (const HotSpot& s : h.spots) {
    if (s.frame.line == 131) item = &s;
    if (s.frame.line == 125) fwd = &s;
  }
  ASSERT_NE(item, nullptr);
  ASSERT_NE(fwd, nullptr);
  // `total += loss.item()` is the innermost frame of its stack: all its time is its own.
  EXPECT_NEAR(item->own_on_thread_s, 0.2, 1e-9);
  EXPECT_NEAR(item->own_idle_s, 0.08, 1e-9);
  // The forward line's time is spent inside torch's module.py: none of it is its own.
  EXPECT_NEAR(fwd->on_thread_s, 0.5, 1e-9);
  EXPECT_EQ(fwd->own_on_thread_s, 0);
  EXPECT_EQ(h.top_own(), item);
  EXPECT_EQ(h.top_own({HostClass::kData}), nullptr);  // the loader line waits inside torch
}

TEST(HostHotspots, SpotsToShowAddTheLinesThatRunThemselves) {
  HostAttribution a;
  a.window_s = 10;
  auto spot = [](int line, HostClass cls, double idle, double own) {
    HotSpot h;
    h.frame = {"train", "train.py", line};
    h.cls = cls;
    h.idle_s = idle;
    h.on_thread_s = std::max(idle, own);
    h.own_on_thread_s = own;
    return h;
  };
  a.spots = {spot(1, HostClass::kSync, 3, 0),        spot(2, HostClass::kFramework, 0.8, 0.6),
             spot(3, HostClass::kFramework, 0.5, 0), spot(4, HostClass::kOther, 0, 0.05),
             spot(5, HostClass::kOther, 0, 0.4),     spot(6, HostClass::kOptimizer, 0, 0.2)};
  auto lines = [](const std::vector<const HotSpot*>& v) {
    std::vector<int> out;
    for (const HotSpot* h : v) out.push_back(h->frame.line);
    return out;
  };
  // By idle: the three with idle time; then the job's own lines by own time (line 4's
  // 0.05 s is under 1% of the window), never the model's code again.
  EXPECT_EQ(lines(spots_to_show(a, 10, 3)), (std::vector<int>{1, 2, 3, 5, 6}));
  EXPECT_EQ(lines(spots_to_show(a, 1, 1)), (std::vector<int>{1, 5}));
  EXPECT_EQ(lines(spots_to_show(a, 2, 0)), (std::vector<int>{1, 2}));
  EXPECT_TRUE(own_time_shown(a, a.spots[5]));
  EXPECT_FALSE(own_time_shown(a, a.spots[3]));
}

TEST(HostHotspots, ClassifiesByLibraryAndLineText) {
  Fixture f;
  const int32_t user = f.frame("step", "train.py", 10);
  const int32_t adam = f.frame("step", "/x/site-packages/torch/optim/adamw.py", 200);
  const int32_t save = f.frame("save", "/x/site-packages/torch/serialization.py", 900);
  const int32_t getb = f.frame("get_batch", "train.py", 40);
  EXPECT_EQ(classify_stack(f.s, {adam, user}, ""), HostClass::kOptimizer);
  EXPECT_EQ(classify_stack(f.s, {save, user}, ""), HostClass::kCheckpoint);
  EXPECT_EQ(classify_stack(f.s, {getb}, "x = torch.stack([...])"), HostClass::kData);
  EXPECT_EQ(classify_stack(f.s, {user}, "acc = (pred == y).float().mean().item()"), HostClass::kSync);
  EXPECT_EQ(classify_stack(f.s, {user}, "print(f'loss {l:.3f}')"), HostClass::kLogging);
  EXPECT_EQ(classify_stack(f.s, {user}, "x = y + 1"), HostClass::kOther);
}

// The leaf frame, not the line's text, says what the thread does (issue 42): a line that
// joins threads and then synchronizes, whose stack ends in threading's join, is waiting on
// threads; the same line with the thread in its own native call is a sync.
TEST(HostHotspots, TheLeafFrameDecidesNotTheLineText) {
  Fixture f;
  const int32_t line = f.frame("gil_join", "misreads.py", 75);
  const int32_t lock = f.frame("_wait_for_tstate_lock", "/usr/lib/python3.12/threading.py", 1167);
  const int32_t join = f.frame("join", "/usr/lib/python3.12/threading.py", 1147);
  const int32_t sync = f.frame("synchronize", "/x/site-packages/torch/cuda/__init__.py", 985);
  const int32_t builtin_to = f.frame("to", "<built-in>", 0);
  const std::string text = "for t in threads: t.join(); torch.cuda.synchronize()";
  EXPECT_EQ(classify_stack(f.s, {lock, join, line}, text), HostClass::kWait);
  EXPECT_EQ(classify_stack(f.s, {sync, line}, text), HostClass::kSync);
  EXPECT_EQ(classify_stack(f.s, {line}, text), HostClass::kSync);
  // A copy to the GPU that holds the thread (a pageable source), in py-spy's stacks (the
  // line is the leaf) and in a trace's (a built-in call under the line).
  EXPECT_EQ(classify_stack(f.s, {line}, "xg = host.to(dev, non_blocking=False)"), HostClass::kTransfer);
  EXPECT_EQ(classify_stack(f.s, {builtin_to, line}, "x = batch.cuda()"), HostClass::kTransfer);
  EXPECT_EQ(classify_stack(f.s, {line}, "x = x.to(torch.float16)"), HostClass::kOther);
  // A DataLoader's wait on its workers' queue is loading data, though its leaf waits.
  const int32_t next = f.frame("__next__", "/x/site-packages/torch/utils/data/dataloader.py", 630);
  const int32_t qget = f.frame("get", "/usr/lib/python3.12/queue.py", 180);
  EXPECT_EQ(classify_stack(f.s, {lock, qget, next, line}, "for x, y in loader:"), HostClass::kData);
  EXPECT_TRUE(line_copies_to_gpu("a, b = x.to(device), y.to(device)"));
  EXPECT_TRUE(line_copies_to_gpu("buf.copy_(src, non_blocking=True)"));
  EXPECT_FALSE(line_copies_to_gpu("m = model.to_empty()"));
}

// The main thread waits in join for the whole window while two threads of its process run
// Python and launch the GPU work: the idle time goes to their lines, not the join.
TEST(HostHotspots, AThreadThatOnlyWaitsGivesWayToTheThreadsItWaitsFor) {
  Fixture f;
  f.s.threads = {
      {10, 10, "MainThread"}, {10, 12, "Thread-1 (worker)"}, {10, 13, "Thread-2 (worker)"}, {10, 14, "pin_memory"}};
  const int32_t line = f.frame("main", "job.py", 30);
  const int32_t join = f.frame("join", "/usr/lib/python3.12/threading.py", 1147);
  const int32_t work = f.frame("worker", "job.py", 12);
  const int32_t cond = f.frame("wait", "/usr/lib/python3.12/threading.py", 355);
  f.s.source_lines["job.py:30"] = "for t in threads: t.join(); torch.cuda.synchronize()";
  const int32_t joining = f.stack({join, line});
  const int32_t working = f.stack({work});
  const int32_t idle_thread = f.stack({cond, work});
  f.seg(0, joining, 0, 1000);
  f.seg(1, working, 0, 1000);
  f.seg(2, working, 0, 400);
  f.seg(3, idle_thread, 0, 1000);  // waits too: not a stand-in
  AttributionInput in;
  in.stacks = &f.s;
  in.window_end_ns = 1000 * kMs;
  in.idle = {{0, 1000 * kMs, 0.5}};
  in.method = "sampled utilization";
  HostAttribution a = attribute_host_time(in);
  EXPECT_EQ(a.waiting_thread, "MainThread of pid 10");
  EXPECT_EQ(a.thread, "Thread-1 (worker) of pid 10, Thread-2 (worker) of pid 10");
  ASSERT_FALSE(a.spots.empty());
  EXPECT_EQ(a.spots[0].frame.line, 12);
  EXPECT_EQ(a.spots[0].cls, HostClass::kOther);
  EXPECT_DOUBLE_EQ(a.idle_by_class[static_cast<int>(HostClass::kWait)], 0.0);
  EXPECT_DOUBLE_EQ(a.idle_by_class[static_cast<int>(HostClass::kSync)], 0.0);
  // A trace names the launching thread: it keeps it, waiting or not.
  in.launch_threads = {{10, 10}};
  a = attribute_host_time(in);
  EXPECT_EQ(a.waiting_thread, "");
  EXPECT_EQ(a.spots[0].cls, HostClass::kWait);
}

TEST(HostHotspots, NoStacksNoWindowNothing) {
  AttributionInput in;
  EXPECT_TRUE(attribute_host_time(in).spots.empty());
}

}  // namespace
}  // namespace chokepoint::analyses

#include "analyses/stacks/trace_stacks.h"

namespace chokepoint::analyses {
namespace {

TEST(TraceStacks, FramesFromPythonFunctionNames) {
  auto f = frame_of_python_function("workloads.py(43): __getitem__");
  EXPECT_EQ(f.file, "workloads.py");
  EXPECT_EQ(f.line, 43);
  EXPECT_EQ(f.function, "__getitem__");
  f = frame_of_python_function("<built-in method item of Tensor object at 0x7f3d2d75a850>");
  EXPECT_EQ(f.function, "item");
  EXPECT_EQ(f.file, "<built-in>");
  f = frame_of_python_function("nn.Module: Linear_0");
  EXPECT_EQ(f.function, "Linear");
  EXPECT_TRUE(samples::is_library_file(f.file));
  EXPECT_TRUE(samples::is_library_file("torch/nn/modules/module.py"));
  EXPECT_TRUE(samples::is_library_file("threading.py"));
  EXPECT_FALSE(samples::is_library_file("workloads.py"));
  EXPECT_FALSE(samples::is_library_file("/home/u/train.py"));
}

TEST(TraceStacks, NestedRangesBecomeSegments) {
  timeline::Timeline tl;
  auto add = [&](const char* name, int64_t a, int64_t b) {
    tl.cpu_ranges.pid.push_back(1);
    tl.cpu_ranges.tid.push_back(1);
    tl.cpu_ranges.category.push_back(timeline::CpuCategory::kPythonFunction);
    tl.cpu_ranges.name.push_back(tl.strings.intern(name));
    tl.cpu_ranges.start.push_back(a);
    tl.cpu_ranges.end.push_back(b);
    tl.cpu_ranges.external_id.push_back(-1);
    tl.cpu_ranges.sequence.push_back(-1);
    tl.cpu_ranges.inputs.push_back(timeline::CpuRanges::kNoInputs);
  };
  add("train.py(10): main", 0, 100);
  add("train.py(20): step", 10, 60);
  add("<built-in method item of Tensor object at 0x1>", 40, 60);
  const samples::PyStacks s = python_stacks_from_trace(tl);
  ASSERT_EQ(s.threads.size(), 1u);
  ASSERT_EQ(s.segments.size(), 4u);  // main | step | item | main
  EXPECT_EQ(s.segments[0].end_ns, 10);
  EXPECT_EQ(s.frames[s.stacks[s.segments[2].stack][0]].function, "item");
  EXPECT_EQ(s.stacks[s.segments[2].stack].size(), 3u);
  EXPECT_EQ(s.segments[3].start_ns, 60);
  EXPECT_EQ(s.segments[3].end_ns, 100);
  EXPECT_EQ(classify_stack(s, s.stacks[s.segments[2].stack], ""), HostClass::kSync);
}

}  // namespace
}  // namespace chokepoint::analyses
