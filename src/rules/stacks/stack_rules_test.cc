#include <gtest/gtest.h>

#include "rules/diagnose.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace {

using analyses::HostClass;

// The rule whose stacks evaluator is `fn`, over `ev` alone, as the engine runs it.
std::optional<Finding> run_stack_rule(StackFn fn, const StackEvidence& ev) {
  for (const Rule& r : all_rules()) {
    if (r.stacks == fn) return evaluate_rule(r, EvidenceSet{.stacks = &ev});
  }
  ADD_FAILURE() << "no rule has this stacks evaluator";
  return std::nullopt;
}

analyses::HostAttribution attribution() {
  analyses::HostAttribution a;
  a.method = "trace";
  a.thread = "MainThread of pid 10";
  a.window_s = 10;
  a.gpu_idle_s = 4;
  a.covered_idle_s = 3.8;
  analyses::HotSpot item;
  item.frame = {"train", "/home/u/train.py", 131};
  item.text = "total_loss += loss.item()";
  item.cls = HostClass::kSync;
  item.idle_s = 3.0;
  analyses::HotSpot fwd;
  fwd.frame = {"train", "/home/u/train.py", 125};
  fwd.cls = HostClass::kFramework;
  fwd.idle_s = 0.8;
  a.spots = {item, fwd};
  a.idle_by_class[static_cast<int>(HostClass::kSync)] = 3.0;
  a.idle_by_class[static_cast<int>(HostClass::kFramework)] = 0.8;
  return a;
}

TEST(StackRules, HostSyncCitesTheLinePerStep) {
  const auto a = attribution();
  StackEvidence ev{a, 100};
  ASSERT_TRUE(ev.decisive());
  auto f = run_stack_rule(host_sync_stacks, ev);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->id, "host-sync");
  EXPECT_NE(f->title.find("train.py:131 `total_loss += loss.item()`"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("30.00 ms of GPU idle per step"), std::string::npos) << f->title;
  // Removing 3 s of idle from a 10 s window: 10/7.
  ASSERT_TRUE(f->estimated_speedup.has_value());
  EXPECT_NEAR(*f->estimated_speedup, 10.0 / 7.0, 1e-9);
  // Framework time between ops holds 20% of the explained idle: worth a host-work finding.
  auto h = run_stack_rule(host_work_stacks, ev);
  ASSERT_TRUE(h.has_value());
  EXPECT_NE(h->title.find("train.py:125"), std::string::npos);
  EXPECT_FALSE(run_stack_rule(input_pipeline_stall_stacks, ev).has_value());
}

TEST(StackRules, HostWorkNamesTheJobsLineThatRunsItself) {
  auto a = attribution();
  // The framework line holds the idle; an EMA loop over the parameters (the line itself is
  // the stack's innermost frame) holds 0.5 s of the thread and little idle.
  analyses::HotSpot ema;
  ema.frame = {"update", "/home/u/train.py", 325};
  ema.text = "ema_p.mul_(0.999).add_(p, alpha=0.001)";
  ema.cls = HostClass::kOther;
  ema.idle_s = 0.05;
  ema.on_thread_s = 0.5;
  ema.own_on_thread_s = 0.5;
  a.spots.push_back(ema);
  a.idle_by_class[static_cast<int>(HostClass::kOther)] = 0.05;
  StackEvidence ev{a, 100};
  auto h = run_stack_rule(host_work_stacks, ev);
  ASSERT_TRUE(h.has_value());
  EXPECT_NE(h->title.find("train.py:125"), std::string::npos) << h->title;
  EXPECT_NE(h->detail.find("train.py:325 `ema_p.mul_(0.999).add_(p, alpha=0.001)` in update() runs the most: "
                           "5.00 ms per step on the thread (5.0% of the window)"),
            std::string::npos)
      << h->detail;
  // 10 s less its 0.5 s (the GPU is busy 6 s): 10/9.5.
  EXPECT_NE(h->detail.find("about 1.05x"), std::string::npos) << h->detail;
  bool has = false;
  for (const auto& e : h->evidence) has = has || (e.metric == "own_line_on_thread_pct" && e.value == 5.0);
  EXPECT_TRUE(has);
  // Under 1% of the window: not named.
  a.spots.back().own_on_thread_s = 0.05;
  StackEvidence small{a, 100};
  EXPECT_EQ(run_stack_rule(host_work_stacks, small)->detail.find("runs the most"), std::string::npos);
}

TEST(StackRules, StacksThatCoverLittleIdleDecideNothing) {
  auto a = attribution();
  a.covered_idle_s = 1.0;  // a quarter of the idle time had a stack
  StackEvidence ev{a, 100};
  EXPECT_FALSE(ev.decisive());
  EXPECT_FALSE(run_stack_rule(host_sync_stacks, ev).has_value());
}

TEST(StackRules, DiagnoseKeepsTheStacksFindingAndItsSource) {
  const auto a = attribution();
  StackEvidence ev{a, 100};
  EvidenceSet set;
  set.stacks = &ev;
  const Diagnosis d = diagnose(set);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().id, "host-sync");
  EXPECT_EQ(d.findings.front().sources, std::vector<std::string>{"stacks"});
  ASSERT_FALSE(d.remedies.empty());
  EXPECT_EQ(d.remedies.front().id, "defer-syncs");
}

// A loop that cuts its batches itself (no DataLoader in the stacks) is told to prefetch
// them, not to add DataLoader workers (issue 42: an eager GPT script slicing a memmap got
// dataloader-workers first).
TEST(StackRules, BatchesMadeWithoutADataLoaderArePrefetchedNotGivenWorkers) {
  auto a = attribution();
  analyses::HotSpot getb;
  getb.frame = {"get_batch", "/home/u/train.py", 40};
  getb.cls = HostClass::kData;
  getb.idle_s = 2.0;
  getb.on_thread_s = 2.0;
  a.spots.insert(a.spots.begin(), getb);
  a.idle_by_class[static_cast<int>(HostClass::kData)] = 2.0;
  StackEvidence ev{a, 100};
  auto f = run_stack_rule(input_pipeline_stall_stacks, ev);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->remedies, std::vector<std::string>{"prefetch-batches"});
  EXPECT_NE(f->detail.find("the loop makes its batches itself"), std::string::npos) << f->detail;
  // With the wait inside torch.utils.data, workers are the change.
  a.dataloader_idle_s = 2.0;
  StackEvidence dl{a, 100};
  EXPECT_EQ(run_stack_rule(input_pipeline_stall_stacks, dl)->remedies, std::vector<std::string>{"dataloader-workers"});
}

// The launching thread held in a copy to the GPU: pageable-memcpy, with pinned copies.
TEST(StackRules, AThreadHeldInACopyIsAPageableCopy) {
  auto a = attribution();
  a.spots[0].text = "xg = host.to(dev)";
  a.spots[0].cls = HostClass::kTransfer;
  a.idle_by_class[static_cast<int>(HostClass::kSync)] = 0;
  a.idle_by_class[static_cast<int>(HostClass::kTransfer)] = 3.0;
  StackEvidence ev{a, 100};
  EXPECT_FALSE(run_stack_rule(host_sync_stacks, ev).has_value());
  auto f = run_stack_rule(pageable_memcpy_stacks, ev);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->id, "pageable-memcpy");
  EXPECT_EQ(f->remedies, std::vector<std::string>{"pinned-copies"});
  EXPECT_NE(f->title.find("copying to the GPU"), std::string::npos) << f->title;
}

}  // namespace
}  // namespace chokepoint::rules
