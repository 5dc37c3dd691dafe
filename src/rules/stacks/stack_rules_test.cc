#include <gtest/gtest.h>

#include "rules/diagnose.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace {

using analyses::HostClass;

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
  auto f = host_sync_stacks(ev);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->id, "host-sync");
  EXPECT_NE(f->title.find("train.py:131 `total_loss += loss.item()`"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("30.00 ms of GPU idle per step"), std::string::npos) << f->title;
  // Removing 3 s of idle from a 10 s window: 10/7.
  ASSERT_TRUE(f->estimated_speedup.has_value());
  EXPECT_NEAR(*f->estimated_speedup, 10.0 / 7.0, 1e-9);
  // Framework time between ops holds 20% of the explained idle: worth a host-work finding.
  auto h = host_work_stacks(ev);
  ASSERT_TRUE(h.has_value());
  EXPECT_NE(h->title.find("train.py:125"), std::string::npos);
  EXPECT_FALSE(input_pipeline_stall_stacks(ev).has_value());
}

TEST(StackRules, StacksThatCoverLittleIdleDecideNothing) {
  auto a = attribution();
  a.covered_idle_s = 1.0;  // a quarter of the idle time had a stack
  StackEvidence ev{a, 100};
  EXPECT_FALSE(ev.decisive());
  EXPECT_FALSE(host_sync_stacks(ev).has_value());
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

}  // namespace
}  // namespace chokepoint::rules
