#include "live/burst_schedule.h"

#include <algorithm>
#include <iterator>

namespace chokepoint::live {

bool BurstSchedule::due(int64_t now, bool gpu_read, bool gpu_busy) {
  if (started_ > 0) return now >= next_;
  if (gpu_busy && gpu_busy_since_ == 0) gpu_busy_since_ = now;
  return (gpu_busy_since_ > 0 && now >= gpu_busy_since_ + kGpuBusyFirstNs) ||
         (!gpu_read && now >= attached_ns_ + kNoGpuFirstNs) || now >= attached_ns_ + kLatestFirstNs;
}

void BurstSchedule::started(int64_t now) {
  ++started_;
  ++counted_;
  const auto planned = static_cast<int>(std::size(kAfterCountedNs));
  next_ = now + (counted_ <= planned ? kAfterCountedNs[counted_ - 1] : kEveryNs);
}

void BurstSchedule::ended(int64_t now, BurstOutcome what) {
  if (what == BurstOutcome::kLoopSure || early_ >= kMaxEarly) return;
  ++early_;
  if (what != BurstOutcome::kLoopUnsure) --counted_;
  next_ = std::min(next_, now + (what == BurstOutcome::kLoopUnsure ? kAfterUnsureNs : kAfterNoLoopNs));
}

}  // namespace chokepoint::live
