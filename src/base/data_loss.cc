#include "base/data_loss.h"

namespace chokepoint {

void add_loss(std::vector<DataLoss>& losses, const std::string& what, int64_t lost, int64_t total) {
  if (total <= 0) return;
  for (DataLoss& l : losses) {
    if (l.what == what) {
      l.lost += lost;
      l.total += total;
      return;
    }
  }
  losses.push_back({what, lost, total});
}

const DataLoss* worst_loss(const std::vector<DataLoss>& losses) {
  const DataLoss* worst = nullptr;
  for (const DataLoss& l : losses) {
    if (l.lost > 0 && (worst == nullptr || l.share() > worst->share())) worst = &l;
  }
  return worst;
}

}  // namespace chokepoint
