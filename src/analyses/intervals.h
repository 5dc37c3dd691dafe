// Disjoint, sorted time intervals: the union of a set of (possibly nested or overlapping)
// ranges, with fast overlap queries. Used for "was this thread inside a DataLoader
// annotation / a sync call / an ATen op during [a, b]?".
#pragma once

#include <utility>
#include <vector>

#include "timeline/model.h"

namespace chokepoint::analyses {

using timeline::TimeNs;

class Intervals {
 public:
  // Adds [s, e); call build() once after the last add().
  void add(TimeNs s, TimeNs e) {
    if (e > s) raw_.emplace_back(s, e);
  }
  // Sorts and merges the added ranges into a disjoint union.
  void build();
  // Length of the intersection of [a, b) with the union.
  TimeNs overlap(TimeNs a, TimeNs b) const;
  // The interval of the union containing t (start <= t < end), if any.
  const std::pair<TimeNs, TimeNs>* containing(TimeNs t) const;
  // Every merged interval intersecting [a, b), clipped to it, in order.
  template <typename F>
  void for_each_in(TimeNs a, TimeNs b, F&& f) const {
    for (size_t i = first_ending_after(a); i < merged_.size() && merged_[i].first < b; ++i) {
      f(std::max(a, merged_[i].first), std::min(b, merged_[i].second));
    }
  }
  TimeNs total() const;
  bool empty() const { return merged_.empty(); }
  const std::vector<std::pair<TimeNs, TimeNs>>& merged() const { return merged_; }

 private:
  size_t first_ending_after(TimeNs t) const;
  std::vector<std::pair<TimeNs, TimeNs>> raw_;
  std::vector<std::pair<TimeNs, TimeNs>> merged_;
};

}  // namespace chokepoint::analyses
