#include "importers/step_ranges.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

namespace chokepoint::importers {

namespace {

bool consume(std::string_view& s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != word[i]) return false;
  }
  s.remove_prefix(word.size());
  return true;
}

bool is_sep(char c) { return c == ' ' || c == '_' || c == '#' || c == ':' || c == '=' || c == '-' || c == '.'; }

}  // namespace

bool step_range_number(std::string_view name, int64_t* number) {
  std::string_view s = name;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!consume(s, "profilerstep")) {
    if (consume(s, "training") || consume(s, "train")) {
      while (!s.empty() && is_sep(s.front())) s.remove_prefix(1);
    }
    if (!consume(s, "step") && !consume(s, "iteration") && !consume(s, "iter")) return false;
  }
  // Then nothing, or separators and digits only.
  while (!s.empty() && is_sep(s.front())) s.remove_prefix(1);
  if (s.empty()) {
    *number = -1;
    return true;
  }
  if (s.size() > 18) return false;
  int64_t n = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    n = n * 10 + (c - '0');
  }
  *number = n;
  return true;
}

size_t add_steps_from_ranges(timeline::Timeline& tl, size_t first_row, int32_t source_index, timeline::StepSource how) {
  const auto& c = tl.cpu_ranges;
  struct Found {
    size_t row;
    int64_t number;
  };
  // Step-named ranges per thread, by start (longest first on ties: the outer one).
  std::map<std::pair<int32_t, int32_t>, std::vector<Found>> by_thread;
  for (size_t i = first_row; i < c.size(); ++i) {
    if (c.category[i] != timeline::CpuCategory::kUserAnnotation) continue;
    int64_t n = -1;
    if (step_range_number(tl.strings.view(c.name[i]), &n)) by_thread[{c.pid[i], c.tid[i]}].push_back({i, n});
  }
  size_t added = 0;
  auto& st = tl.steps;
  for (auto& [thread, found] : by_thread) {
    std::sort(found.begin(), found.end(), [&](const Found& a, const Found& b) {
      return c.start[a.row] != c.start[b.row] ? c.start[a.row] < c.start[b.row] : c.end[a.row] > c.end[b.row];
    });
    timeline::TimeNs outer_end = INT64_MIN;
    int64_t ordinal = 0;
    for (const Found& f : found) {
      if (c.start[f.row] < outer_end) continue;  // inside the previous step
      outer_end = c.end[f.row];
      ++ordinal;
      st.number.push_back(f.number >= 0 ? f.number : ordinal);
      st.source_index.push_back(source_index);
      st.pid.push_back(thread.first);
      st.tid.push_back(thread.second);
      st.start.push_back(c.start[f.row]);
      st.end.push_back(c.end[f.row]);
      st.how.push_back(how);
      ++added;
    }
  }
  return added;
}

}  // namespace chokepoint::importers
