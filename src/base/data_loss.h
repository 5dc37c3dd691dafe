// Data lost on the way in: how much of one kind of input could not be used (events with a
// negative duration, ticks out of order, GPU reads that failed after the GPU had answered).
// Import stats count what happened; a loss also knows out of how many, so the diagnosis can
// lower its confidence by the share lost and refuse a verdict when too much is gone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chokepoint {

struct DataLoss {
  std::string what;  // "GPU events with a negative or missing duration", plural noun phrase
  int64_t lost = 0;
  int64_t total = 0;  // of the same kind, lost ones included
  double share() const { return total > 0 ? static_cast<double>(lost) / static_cast<double>(total) : 0.0; }
};

// From this share of one kind of data lost, no verdict is given: what is left may be the
// part that is not representative (a GPU lost after the first fifth of the run, 20% of the
// kernels with no duration make the GPU look idle).
inline constexpr double kUntrustedLossShare = 0.25;

// Adds `lost` of `total` to the entry named `what` (creating it); nothing when total is 0.
void add_loss(std::vector<DataLoss>& losses, const std::string& what, int64_t lost, int64_t total);

// The entry with the largest share, or null when nothing was lost.
const DataLoss* worst_loss(const std::vector<DataLoss>& losses);

}  // namespace chokepoint
