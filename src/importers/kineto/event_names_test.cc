#include "importers/kineto/event_names.h"

#include <gtest/gtest.h>

namespace chokepoint::importers::kineto {
namespace {

using timeline::CopyKind;
using timeline::MemKind;

struct Copy {
  CopyKind kind = CopyKind::kUnknown;
  MemKind src = MemKind::kUnknown, dst = MemKind::kUnknown;
};

Copy copy(std::string_view name) {
  Copy c;
  parse_memcpy_name(name, &c.kind, &c.src, &c.dst);
  return c;
}

TEST(EventNames, Memcpy) {
  Copy c = copy("Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(c.kind, CopyKind::kHtoD);
  EXPECT_EQ(c.src, MemKind::kPageable);
  EXPECT_EQ(c.dst, MemKind::kDevice);
  c = copy("Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(c.kind, CopyKind::kDtoH);
  EXPECT_EQ(c.src, MemKind::kDevice);
  EXPECT_EQ(c.dst, MemKind::kPinned);
  c = copy("Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(c.kind, CopyKind::kDtoD);
  EXPECT_EQ(copy("Memcpy PtoP (Device -> Device)").kind, CopyKind::kPtoP);
  EXPECT_EQ(copy("Memcpy HtoH (Pinned -> Managed)").dst, MemKind::kManaged);
  EXPECT_EQ(copy("Memcpy HtoA (Pinned -> Array)").kind, CopyKind::kUnknown);
  EXPECT_EQ(copy("Memcpy DtoD (Device Static -> Device)").src, MemKind::kDevice);
  c = copy("Memcpy");  // nothing to say: unknown everywhere
  EXPECT_EQ(c.kind, CopyKind::kUnknown);
  EXPECT_EQ(c.src, MemKind::kUnknown);
  EXPECT_EQ(copy(")Memcpy HtoD (").dst, MemKind::kUnknown);
  EXPECT_EQ(mem_kind(in_parens("Memset (Device)")), MemKind::kDevice);
  EXPECT_EQ(mem_kind(in_parens("Memset (Unknown)")), MemKind::kUnknown);
}

TEST(EventNames, SyncKindsStepsCategories) {
  EXPECT_EQ(sync_kind("Stream Wait Event"), timeline::SyncKind::kStreamWaitEvent);
  EXPECT_EQ(sync_kind("Context Sync"), timeline::SyncKind::kContextSync);
  EXPECT_EQ(sync_kind("sync_7"), timeline::SyncKind::kUnknown);
  int64_t n = 0;
  EXPECT_TRUE(profiler_step_number("ProfilerStep#915", &n));
  EXPECT_EQ(n, 915);
  EXPECT_FALSE(profiler_step_number("ProfilerStep#", &n));
  EXPECT_FALSE(profiler_step_number("ProfilerStep#3a", &n));
  EXPECT_FALSE(profiler_step_number("ProfilerStep#99999999999999999999", &n));
  EXPECT_FALSE(profiler_step_number("profilerstep#3", &n));
  EXPECT_EQ(classify_cat("kernel"), Cat::kKernel);
  EXPECT_EQ(classify_cat("Kernel"), Cat::kKernel);
  EXPECT_EQ(classify_cat("gpu_user_annotation"), Cat::kGpuUserAnnotation);
  EXPECT_EQ(classify_cat("Operator"), Cat::kCpuOp);
  EXPECT_EQ(classify_cat("overhead"), Cat::kOther);
  EXPECT_EQ(classify_cat(""), Cat::kOther);
}

}  // namespace
}  // namespace chokepoint::importers::kineto
