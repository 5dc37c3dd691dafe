#include "base/stat_catalogue.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace chokepoint {
namespace {

TEST(StatCatalogue, EveryIdHasOneEntryWithAUniqueName) {
  const auto stats = all_stats();
  ASSERT_EQ(stats.size(), static_cast<size_t>(StatId::kCount));
  std::set<std::string_view> names;
  for (size_t i = 0; i < stats.size(); ++i) {
    const StatDef& d = stats[i];
    EXPECT_EQ(static_cast<size_t>(d.id), i) << d.name;
    EXPECT_EQ(&stat_def(d.id), &d);
    EXPECT_TRUE(names.insert(d.name).second) << "two stats named " << d.name;
    EXPECT_FALSE(d.name.empty());
    EXPECT_EQ(d.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string_view::npos) << d.name;
    EXPECT_FALSE(d.description.empty()) << d.name;
    EXPECT_FALSE(d.reader.empty()) << d.name;
    // A "{}" and what fills it come together; at most one "{}".
    const size_t hole = d.description.find("{}");
    EXPECT_EQ(hole != std::string_view::npos, !d.detail.empty()) << d.name;
    if (hole != std::string_view::npos) {
      EXPECT_EQ(d.description.find("{}", hole + 2), std::string_view::npos) << d.name;
    }
    EXPECT_EQ(find_stat(d.name), d.id);
  }
  EXPECT_FALSE(find_stat("no_such_stat").has_value());
}

TEST(StatCatalogue, DetailFillsTheDescription) {
  EXPECT_EQ(stat_description(StatId::kSamplesUnreadable, "Permission denied"),
            "samples.jsonl could not be read (Permission denied); no samples");
  EXPECT_EQ(stat_description(StatId::kTraceUnreadable, "why"), "why");
  EXPECT_EQ(stat_description(StatId::kKinetoEmptyTrace, "ignored"), "The trace's traceEvents array is empty.");
  EXPECT_EQ(stat_listing_description(stat_def(StatId::kMetaFieldsUnreadable)),
            "fields of meta.json with a value of the wrong type, left out (the samples are read as usual): "
            "<field names>");
}

}  // namespace
}  // namespace chokepoint
