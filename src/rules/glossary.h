// The glossary behind `chokepoint explain ID`: for every finding id (rules/registry.cc),
// every remedy id (rules/remedies.h), every verdict category (rules/finding.h), the other
// words the reports print ("term") and every evidence metric (findings[].evidence[].metric),
// what it means, how chokepoint detects it and what to do (for a metric: what it measures,
// where it comes from and how to read it). A finding's texts live in its rule's descriptor
// (rules/rule.h); remedies', verdicts' and terms' in glossary.cc; metrics' in
// metric_glossary.cc. glossary_test.cc checks that every rule, remedy and metric has its
// texts, so none can be added without.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chokepoint::rules {

struct GlossaryEntry {
  std::string_view id;
  std::string_view kind;       // "finding", "remedy", "verdict", "term" (a word the reports print) or "metric"
  std::string_view meaning;    // what it means
  std::string_view detection;  // how chokepoint detects it (or, for a remedy, estimates it)
  std::string_view action;     // what to do
};

// Every entry: findings in the registry's order, then remedies, verdict categories, terms,
// then metrics (alphabetical).
const std::vector<GlossaryEntry>& glossary();
// By id; else as the reports print it: any case, underscores or spaces for dashes (an idle
// cause "launch_overhead", a metric as the text prints it: "sub wave kernel pct").
const GlossaryEntry* find_glossary_entry(std::string_view id);

// The entry as `explain ID` prints it (plain text, wrapped at 88 columns).
std::string format_glossary_entry(const GlossaryEntry& e);
// Every id, grouped by kind, as `explain` without an id prints it.
std::string format_glossary_index();

}  // namespace chokepoint::rules
