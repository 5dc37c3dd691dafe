#include "rules/glossary.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rules/finding.h"
#include "rules/metric_glossary.h"
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

// `id` with `from` replaced by `to`: a metric as the text report prints it ('_' -> ' ').
std::string with(std::string_view id, char from, char to) {
  std::string s(id);
  std::replace(s.begin(), s.end(), from, to);
  return s;
}

// One entry per id, each with all three texts, and nothing that is not a rule, a remedy or
// a category (a renamed rule must not leave a stale entry).
// An entry has all three texts and names a rule, a remedy or a verdict that exists; a
// metric names none of them, in any spelling `explain` accepts (MetricsAreThoseOfTheRules
// checks that the rules print it).
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
  } else if (e.kind == "metric") {
    const std::string dashed = with(e.id, '_', '-');
    EXPECT_EQ(find_rule(dashed), nullptr) << e.id;
    EXPECT_EQ(find_remedy(dashed), nullptr) << e.id;
    // As JSON and the text print it, it finds this entry, not a verdict or term of that name.
    EXPECT_EQ(find_glossary_entry(e.id), &e) << e.id;
    EXPECT_EQ(find_glossary_entry(with(e.id, '_', ' ')), &e) << e.id;
    EXPECT_EQ(find_glossary_entry(dashed), &e) << e.id;
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
  // Verdicts, report terms, evidence metrics (metric_glossary.cc).
  EXPECT_EQ(ids.size(), all_rules().size() + all_remedies().size() + 10 + 12 + 132);
  EXPECT_EQ(metric_glossary().size(), 132u);
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
  EXPECT_NE(index.find("Metrics:\n  achieved_gbps allocator_calls_per_step"), std::string::npos) << index;
  expect_lines_fit(index);
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

namespace chokepoint::rules {
namespace {

// The metric names built at run time, by their source file and expression, each with every
// name it can make. straggler_rank.cc: "straggler_excess_" + s.cause + "_ms", printed when
// the cause has an excess (cause_ms > 0). The causes are those cross_rank.cc's explain()
// sets (analyses/distributed/cross_rank.h): input, host, compute, and clocks (the compute
// excess of a rank whose SM clock is 5% below the others'); "unknown" has no excess, so
// no evidence.
struct DynamicMetric {
  const char* file;
  const char* expression;  // the first argument of evidence(), without its spaces
  std::vector<std::string> names;
};
const std::vector<DynamicMetric>& dynamic_metrics() {
  static const std::vector<DynamicMetric> kDynamic = {
      {"rules/straggler_rank.cc",
       "\"straggler_excess_\"+s.cause+\"_ms\"",
       {"straggler_excess_input_ms", "straggler_excess_host_ms", "straggler_excess_compute_ms",
        "straggler_excess_clocks_ms"}},
  };
  return kDynamic;
}
// The causes behind the straggler's names, as straggler_rank.cc tests them (s.cause == "...").
const std::set<std::string> kStragglerCauses = {"input", "host", "compute", "clocks"};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The end (one past) of the literal that opens at `i`: "...", '...' or R"d(...)d".
size_t literal_end(const std::string& src, size_t i) {
  if (src[i] == 'R') {
    const size_t open = src.find('(', i);
    const std::string close = ")" + src.substr(i + 2, open - i - 2) + "\"";
    const size_t end = src.find(close, open);
    return end == std::string::npos ? src.size() : end + close.size();
  }
  size_t j = i + 1;
  while (j < src.size() && src[j] != src[i]) j += src[j] == '\\' ? 2 : 1;
  return std::min(j + 1, src.size());
}

// `src` without its comments, literals kept (a ' after a digit separates digits: 1'000).
std::string without_comments(const std::string& src) {
  std::string out;
  for (size_t i = 0; i < src.size();) {
    const bool prev_ident = i > 0 && ident_char(src[i - 1]);
    if (src.compare(i, 2, "//") == 0) {
      i = std::min(src.find('\n', i), src.size());
    } else if (src.compare(i, 2, "/*") == 0) {
      const size_t end = src.find("*/", i + 2);
      i = end == std::string::npos ? src.size() : end + 2;
      out += ' ';
    } else if (src[i] == '"' || (src[i] == '\'' && !prev_ident) || (src.compare(i, 2, "R\"") == 0 && !prev_ident)) {
      const size_t end = literal_end(src, i);
      out += src.substr(i, end - i);
      i = end;
    } else {
      out += src[i++];
    }
  }
  return out;
}

// The first argument of the call whose '(' is at `open`: its text (literals kept whole)
// up to the first ',' or ')' outside brackets and literals, and the string literals in it.
struct Argument {
  std::string text;
  std::vector<std::string> literals;
  bool concatenated = false;  // a '+' outside the literals: a name built at run time
};
Argument first_argument(const std::string& src, size_t open) {
  Argument a;
  int depth = 0;
  for (size_t i = open + 1; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '"' || (c == '\'' && !ident_char(src[i - 1]))) {
      std::string lit;
      size_t j = i + 1;
      for (; j < src.size() && src[j] != c; ++j) {
        if (src[j] == '\\' && j + 1 < src.size()) lit += src[j++];
        lit += src[j];
      }
      if (c == '"') a.literals.push_back(lit);
      a.text += src.substr(i, j + 1 - i);
      i = j;
      continue;
    }
    if (depth == 0 && (c == ',' || c == ')')) break;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == '+') a.concatenated = true;
    if (!std::isspace(static_cast<unsigned char>(c))) a.text += c;
  }
  return a;
}

// The metric name(s) of one call's first argument, `arg`, into `names` (with `rel`, the
// file); a name neither literal nor a listed dynamic expression fails here.
void add_metric_names(const std::string& rel, const Argument& arg, std::map<std::string, std::string>& names) {
  if (arg.concatenated) {
    const auto d = std::find_if(dynamic_metrics().begin(), dynamic_metrics().end(),
                                [&](const DynamicMetric& m) { return rel == m.file && arg.text == m.expression; });
    if (d == dynamic_metrics().end()) {
      ADD_FAILURE() << rel << ": the metric " << arg.text
                    << " is built at run time: list the names it makes in dynamic_metrics()";
      return;
    }
    for (const auto& n : d->names) names.emplace(n, rel);
    return;
  }
  if (arg.literals.empty()) ADD_FAILURE() << rel << ": the metric " << arg.text << " is not a literal: name it";
  for (const auto& n : arg.literals) names.emplace(n, rel);  // one, or both sides of a ?:
}

// Every metric name the rules' sources (`root`/rules, tests and their helpers excluded)
// give an evidence(), evidence_at_most() or evidence_vs_ceiling() call, with the file
// (relative to `root`) of its first use. Findings are made there only.
std::map<std::string, std::string> metrics_in_sources(const std::filesystem::path& root) {
  std::map<std::string, std::string> names;
  for (const auto& f : std::filesystem::recursive_directory_iterator(root / "rules")) {
    const std::string ext = f.path().extension().string(), stem = f.path().stem().string();
    if (!f.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    if (stem.ends_with("_test") || stem.find("test_util") != std::string::npos || stem.starts_with("testing_"))
      continue;
    const std::string rel = std::filesystem::relative(f.path(), root).generic_string();
    const std::string src = without_comments(read_file(f.path()));
    for (size_t at = src.find("evidence"); at != std::string::npos; at = src.find("evidence", at + 1)) {
      if (at > 0 && ident_char(src[at - 1])) continue;  // throttle_evidence(), add_stack_evidence()
      size_t open = at + std::string_view("evidence").size();
      for (std::string_view suffix : {"_at_most", "_vs_ceiling"}) {
        if (src.compare(open, suffix.size(), suffix) == 0) open += suffix.size();
      }
      if (open >= src.size() || src[open] != '(') continue;
      const Argument arg = first_argument(src, open);
      if (arg.text.starts_with("std::string")) continue;  // the declarations (rule.h, registry.cc)
      add_metric_names(rel, arg, names);
    }
  }
  return names;
}

// Every metric a finding's evidence can carry has its entry (`chokepoint explain` knows
// every name the reports print), and every metric entry is one the rules still print.
TEST(Glossary, MetricsAreThoseOfTheRules) {
  const std::map<std::string, std::string> used = metrics_in_sources(CHOKEPOINT_SOURCE_DIR);
  ASSERT_GT(used.size(), 100u) << "read " << CHOKEPOINT_SOURCE_DIR;
  for (const auto& [name, file] : used) {
    EXPECT_TRUE(std::all_of(name.begin(), name.end(),
                            [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }))
        << file << ": metric '" << name << "' is not snake_case";
    const GlossaryEntry* e = find_glossary_entry(name);
    EXPECT_NE(e, nullptr) << file << ": no glossary entry for the metric " << name << " (rules/metric_glossary.cc)";
    if (e == nullptr) continue;
    EXPECT_EQ(e->kind, "metric") << name;
    EXPECT_EQ(e->id, name);
  }
  for (const auto& e : metric_glossary()) {
    EXPECT_EQ(e.kind, "metric") << e.id;
    EXPECT_TRUE(used.contains(std::string(e.id))) << "stale metric entry " << e.id << ": no rule prints it";
  }
  EXPECT_TRUE(std::is_sorted(metric_glossary().begin(), metric_glossary().end(),
                             [](const GlossaryEntry& a, const GlossaryEntry& b) { return a.id < b.id; }));
  // The straggler's causes as its rule tests them are those its names are listed for.
  const std::string straggler = read_file(std::filesystem::path(CHOKEPOINT_SOURCE_DIR) / "rules/straggler_rank.cc");
  std::set<std::string> causes;
  const std::string key = "s.cause == \"";
  for (size_t at = straggler.find(key); at != std::string::npos; at = straggler.find(key, at + 1)) {
    const size_t from = at + key.size();
    causes.insert(straggler.substr(from, straggler.find('"', from) - from));
  }
  EXPECT_EQ(causes, kStragglerCauses);
  for (const auto& c : kStragglerCauses) EXPECT_TRUE(used.contains("straggler_excess_" + c + "_ms")) << c;
}

// A metric is found as the JSON prints it and as the text does (spaces for underscores,
// one argument: `chokepoint explain "sub wave kernel pct"`), and reads as a metric.
TEST(Glossary, ExplainsAMetricAsTheReportsPrintIt) {
  for (const char* w :
       {"sub_wave_kernel_pct", "sub wave kernel pct", "Sub-Wave-Kernel-Pct", "gil wait s", "own line on thread pct"}) {
    const GlossaryEntry* e = find_glossary_entry(w);
    ASSERT_NE(e, nullptr) << w;
    EXPECT_EQ(e->kind, "metric") << w;
  }
  EXPECT_EQ(find_glossary_entry("sub wave kernel pct")->id, "sub_wave_kernel_pct");
  // The idle cause and the remedy keep their entries.
  EXPECT_EQ(find_glossary_entry("launch overhead")->id, "launch-overhead");
  EXPECT_EQ(find_glossary_entry("dataloader_workers")->kind, "remedy");
  const std::string text = format_glossary_entry(*find_glossary_entry("sub wave kernel pct"));
  EXPECT_EQ(text.rfind("sub_wave_kernel_pct (metric)\n  What it measures:\n", 0), 0u) << text;
  EXPECT_NE(text.find("  Where it comes from:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  How to read it:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("low-occupancy fires at 5% or more."), std::string::npos) << text;
  for (const auto& e : metric_glossary()) {
    SCOPED_TRACE(std::string(e.id));
    expect_lines_fit(format_glossary_entry(e));
  }
}

// One engine: the engine's files never name a rule or a remedy to treat it apart; what a
// rule asks of the engine is in its descriptor (Rule::gil_measure_decides, lead_for,
// saturates_the_link; RemedyInfo::gain_in), and the names a descriptor gives are real.
TEST(Engine, NoRuleIsSpecialCasedByItsId) {
  const std::filesystem::path dir = std::filesystem::path(CHOKEPOINT_SOURCE_DIR) / "rules";
  const std::regex by_id(R"((\bid|->id|\.id)\s*[!=]=\s*")");
  int files = 0;
  for (const char* name : {"diagnose.cc", "verdict_samples.cc", "verdict_trace.cc", "remedies.cc", "registry.cc"}) {
    const std::string src = without_comments(read_file(dir / name));
    ASSERT_FALSE(src.empty()) << name;
    ++files;
    std::smatch m;
    EXPECT_FALSE(std::regex_search(src, m, by_id)) << name << ": " << m.str();
  }
  EXPECT_EQ(files, 5);
  for (const Rule& r : all_rules()) {
    if (r.lead_for.empty()) continue;
    EXPECT_NE(find_rule(r.lead_for), nullptr) << r.id << " leads for an unknown rule " << r.lead_for;
    EXPECT_NE(find_remedy(r.lead_remedy), nullptr) << r.id << " leads with an unknown remedy " << r.lead_remedy;
  }
}

}  // namespace
}  // namespace chokepoint::rules
