#include "timeline/import_stats.h"

namespace chokepoint::timeline {

void ImportStats::add(const std::string& name, Severity severity,
                      const std::string& description, int64_t n) {
  for (auto& s : stats_) {
    if (s.name == name) {
      s.count += n;
      return;
    }
  }
  stats_.push_back(ImportStat{name, severity, description, n});
}

int64_t ImportStats::count(const std::string& name) const {
  for (const auto& s : stats_) {
    if (s.name == name) return s.count;
  }
  return 0;
}

bool ImportStats::has_errors() const {
  for (const auto& s : stats_) {
    if (s.severity == Severity::kCritical && s.count > 0) return true;
  }
  return false;
}

void ImportStats::merge(const ImportStats& other) {
  for (const auto& s : other.stats_) add(s.name, s.severity, s.description, s.count);
  for (const auto& l : other.losses_) add_loss(losses_, l.what, l.lost, l.total);
}

}  // namespace chokepoint::timeline
