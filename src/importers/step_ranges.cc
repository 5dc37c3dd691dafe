#include "importers/step_ranges.h"

#include <algorithm>
#include <map>
#include <vector>

namespace chokepoint::importers {

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
