#include "exporters/trace_formats.h"

#include <gtest/gtest.h>

namespace chokepoint::exporters {
namespace {

TEST(TraceFormats, NamesAndAliasesAreTraceFormats) {
  EXPECT_TRUE(is_trace_format("chrome"));
  EXPECT_TRUE(is_trace_format("perfetto"));
  EXPECT_FALSE(is_trace_format("json"));
  EXPECT_FALSE(is_trace_format(""));
  EXPECT_EQ(trace_format_list(), "chrome (perfetto)");
  EXPECT_EQ(trace_format_list("alias"), "chrome (alias perfetto)");
}

}  // namespace
}  // namespace chokepoint::exporters
