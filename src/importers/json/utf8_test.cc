#include "importers/json/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace chokepoint::importers::json {
namespace {

TEST(Utf8, ReplacesOnlyInvalidBytes) {
  std::string s = "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad \xff \xc0\xaf \xed\xa0\x80 \xe2\x82";
  const size_t n = sanitize_utf8(s.data(), s.size());
  EXPECT_EQ(s, "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad ? ?? ??? ??");
  EXPECT_EQ(n, 8u);
}

}  // namespace
}  // namespace chokepoint::importers::json
