#include "rules/glossary.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "rules/finding.h"
#include "rules/remedies.h"
#include "rules/rule.h"

namespace chokepoint::rules {
namespace {

// A rule or remedy added without its glossary entry fails here: `chokepoint explain` must
// know every id a report can print.
TEST(Glossary, EveryRegisteredRuleHasAnEntry) {
  ASSERT_FALSE(all_rules().empty());
  for (const auto& r : all_rules()) {
    const auto* e = find_glossary_entry(r.id);
    ASSERT_NE(e, nullptr) << "no glossary entry for rule " << r.id;
    EXPECT_EQ(e->kind, "finding") << r.id;
  }
}

TEST(Glossary, EveryRemedyHasAnEntry) {
  ASSERT_FALSE(all_remedies().empty());
  for (const auto& r : all_remedies()) {
    const auto* e = find_glossary_entry(r.id);
    ASSERT_NE(e, nullptr) << "no glossary entry for remedy " << r.id;
    EXPECT_EQ(e->kind, "remedy") << r.id;
  }
}

TEST(Glossary, EveryVerdictCategoryHasAnEntry) {
  for (auto c : {Category::kInput, Category::kHost, Category::kSync, Category::kTransfer, Category::kCompute,
                 Category::kMemory, Category::kCommunication, Category::kIo, Category::kIdle, Category::kUnknown}) {
    const auto* e = find_glossary_entry(category_name(c));
    ASSERT_NE(e, nullptr) << "no glossary entry for verdict " << category_name(c);
    EXPECT_EQ(e->kind, "verdict");
  }
}

// One entry per id, each with all three texts, and nothing that is not a rule, a remedy or
// a category (a renamed rule must not leave a stale entry).
// An entry has all three texts and names a rule, a remedy or a verdict that exists.
void check_entry(const GlossaryEntry& e) {
  EXPECT_FALSE(e.meaning.empty()) << e.id;
  EXPECT_FALSE(e.detection.empty()) << e.id;
  EXPECT_FALSE(e.action.empty()) << e.id;
  if (e.kind == "finding") {
    EXPECT_NE(find_rule(e.id), nullptr) << e.id;
  } else if (e.kind == "remedy") {
    EXPECT_NE(find_remedy(e.id), nullptr) << e.id;
  } else if (e.kind == "term") {
    EXPECT_EQ(find_rule(e.id), nullptr) << e.id;  // a word of the reports, not an id of the above
  } else {
    EXPECT_EQ(e.kind, "verdict") << e.id;
  }
}

TEST(Glossary, EntriesAreUniqueCompleteAndCurrent) {
  std::set<std::string> ids;
  for (const auto& e : glossary()) {
    EXPECT_TRUE(ids.insert(std::string(e.id)).second) << "duplicate entry " << e.id;
    check_entry(e);
  }
  EXPECT_EQ(ids.size(), all_rules().size() + all_remedies().size() + 10 + 4);  // verdicts, report terms
}

// No line of `text` is wider than 88 columns.
void expect_lines_fit(const std::string& text) {
  for (size_t pos = 0, end; pos < text.size(); pos = end + 1) {
    end = text.find('\n', pos);
    EXPECT_LE(end - pos, 88u) << text.substr(pos, end - pos);
  }
}

TEST(Glossary, FormatsAnEntryAndTheIndex) {
  const auto* e = find_glossary_entry("host-sync");
  ASSERT_NE(e, nullptr);
  const std::string text = format_glossary_entry(*e);
  EXPECT_EQ(text.rfind("host-sync (finding)\n  What it means:\n    Synchronizing calls", 0), 0u) << text;
  EXPECT_NE(text.find("  How it is detected:\n"), std::string::npos);
  EXPECT_NE(text.find("  What to do:\n"), std::string::npos);
  expect_lines_fit(text);
  EXPECT_EQ(find_glossary_entry("no-such-id"), nullptr);
  const std::string index = format_glossary_index();
  EXPECT_EQ(index.rfind("Findings:\n  input-pipeline-stall launch-overhead", 0), 0u) << index;
  EXPECT_NE(index.find("Remedies:\n  cuda-graphs"), std::string::npos);
  EXPECT_NE(index.find("Verdicts:\n  input host sync"), std::string::npos);
}

}  // namespace
}  // namespace chokepoint::rules

namespace chokepoint::rules {
namespace {

// Issue 44: every word a report prints can be explained: the idle causes as the JSON and
// the tables spell them, and "confidence".
TEST(Glossary, WordsTheReportsPrint) {
  for (const char* w : {"launch_overhead", "host_work", "input", "sync", "allocator", "gpu_wait", "nothing_queued",
                        "unknown", "confidence", "Host-Work"}) {
    EXPECT_NE(find_glossary_entry(w), nullptr) << w;
  }
  EXPECT_EQ(find_glossary_entry("launch_overhead")->id, "launch-overhead");
  EXPECT_EQ(find_glossary_entry("no_such_word"), nullptr);
  EXPECT_NE(format_glossary_index().find("Report terms:\n  confidence allocator gpu-wait nothing-queued"),
            std::string::npos)
      << format_glossary_index();
}

}  // namespace
}  // namespace chokepoint::rules
