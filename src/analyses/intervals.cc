#include "analyses/intervals.h"

#include <algorithm>

namespace chokepoint::analyses {

void Intervals::build() {
  std::sort(raw_.begin(), raw_.end());
  merged_.clear();
  for (const auto& r : raw_) {
    if (!merged_.empty() && r.first <= merged_.back().second) {
      merged_.back().second = std::max(merged_.back().second, r.second);
    } else {
      merged_.push_back(r);
    }
  }
  raw_.clear();
  raw_.shrink_to_fit();
}

size_t Intervals::first_ending_after(TimeNs t) const {
  auto it = std::upper_bound(merged_.begin(), merged_.end(), t,
                             [](TimeNs v, const std::pair<TimeNs, TimeNs>& iv) { return v < iv.second; });
  return static_cast<size_t>(it - merged_.begin());
}

TimeNs Intervals::overlap(TimeNs a, TimeNs b) const {
  TimeNs sum = 0;
  for_each_in(a, b, [&](TimeNs s, TimeNs e) { sum += e - s; });
  return sum;
}

const std::pair<TimeNs, TimeNs>* Intervals::containing(TimeNs t) const {
  size_t i = first_ending_after(t);
  if (i < merged_.size() && merged_[i].first <= t) return &merged_[i];
  return nullptr;
}

TimeNs Intervals::total() const {
  TimeNs sum = 0;
  for (const auto& m : merged_) sum += m.second - m.first;
  return sum;
}

}  // namespace chokepoint::analyses
