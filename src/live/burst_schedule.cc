#include "live/burst_schedule.h"

#include <algorithm>
#include <iterator>

namespace chokepoint::live {

bool BurstSchedule::due(int64_t now, bool gpu_read, bool gpu_busy) {
  if (gpu_busy && gpu_busy_since_ == 0) gpu_busy_since_ = now;
  if (!gpu_busy) busy_from_ = 0;
  else if (busy_from_ == 0) busy_from_ = now;
  if (running_) {
    ++ticks_;
    idle_ticks_ += gpu_busy ? 0 : 1;
    return false;
  }
  if (started_ > 0) {
    const bool woke = wake_ && busy_from_ >= started_at_ && busy_from_ > 0 && now >= busy_from_ + kGpuWokeNs;
    return now >= next_ || woke;
  }
  return (gpu_busy_since_ > 0 && now >= gpu_busy_since_ + kGpuBusyFirstNs) ||
         (!gpu_read && now >= attached_ns_ + kNoGpuFirstNs) || now >= attached_ns_ + kLatestFirstNs;
}

void BurstSchedule::started(int64_t now) {
  ++started_;
  ++counted_;
  running_ = true;
  started_at_ = now;
  ticks_ = idle_ticks_ = 0;
  wake_ = false;
  const auto planned = static_cast<int>(std::size(kAfterCountedNs));
  next_ = now + (counted_ <= planned ? kAfterCountedNs[counted_ - 1] : kEveryNs);
}

void BurstSchedule::ended(int64_t now, BurstOutcome what) {
  running_ = false;
  // The GPU idle at least half the ticks the burst ran (none seen: as at the last tick).
  const bool gpu_idle = ticks_ > 0 ? 2 * idle_ticks_ >= ticks_ : busy_from_ == 0;
  if (what == BurstOutcome::kNoLoop && gpu_idle) {
    // Standing still on the CPU: it does not count, and neither the plan nor the early
    // budget applies; the gap doubles, and the GPU waking up brings the next sooner.
    --counted_;
    constexpr int kMaxDoublings = 5;
    next_ = now + std::min(kAfterIdleMaxNs, kAfterNoLoopNs << std::min(idle_still_, kMaxDoublings));
    ++idle_still_;
    wake_ = true;
    return;
  }
  idle_still_ = 0;
  if (what == BurstOutcome::kLoopSure || early_ >= kMaxEarly) return;
  ++early_;
  if (what != BurstOutcome::kLoopUnsure) --counted_;
  next_ = std::min(next_, now + (what == BurstOutcome::kLoopUnsure ? kAfterUnsureNs : kAfterNoLoopNs));
}

}  // namespace chokepoint::live
