#include "report/stat_listing.h"

#include <gtest/gtest.h>

#include "base/stat_catalogue.h"

namespace chokepoint::report {
namespace {

TEST(StatListing, ListsEveryStatOnItsOwnLine) {
  const std::string text = format_stat_catalogue();
  for (const StatDef& d : all_stats()) {
    std::string key(1, '\n');
    key.append(d.name).push_back(' ');
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << d.name;
    const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(severity_name(d.severity)), std::string::npos) << line;
    EXPECT_NE(line.find(stat_listing_description(d)), std::string::npos) << line;
  }
  EXPECT_NE(text.find("samples.jsonl could not be read (<why>); no samples"), std::string::npos);
}

}  // namespace
}  // namespace chokepoint::report
