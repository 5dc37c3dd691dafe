#include "analyses/whatif/remedies/common.h"

#include <fmt/format.h>

#include <vector>

namespace chokepoint::analyses::whatif::remedy {

TimeNs median_launch_cost(const Context& c) {
  std::vector<TimeNs> v;
  for (size_t i = 0; i < c.g.host.size(); ++i) {
    if (c.g.host[i].api == timeline::ApiClass::kLaunch && !c.plain.waits[i]) {
      v.push_back(c.plain.gap[i] + c.plain.dur[i]);
    }
  }
  if (v.empty()) return 10'000;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::string per_step_count(const Context& c, int64_t total) {
  return fmt::format("{:.0f}", static_cast<double>(total) / static_cast<double>(std::max<int64_t>(1, c.g.steps)));
}

std::string per_step_ms(const Context& c, TimeNs total) {
  return fmt::format("{:.2f} ms",
                     static_cast<double>(total) / 1e6 / static_cast<double>(std::max<int64_t>(1, c.g.steps)));
}

}  // namespace chokepoint::analyses::whatif::remedy
