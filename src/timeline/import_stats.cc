#include "timeline/import_stats.h"

namespace chokepoint::timeline {

void ImportStats::add(StatId id, std::string_view detail, int64_t n) {
  const StatDef& def = stat_def(id);
  for (auto& s : stats_) {
    if (s.name == def.name) {
      s.count += n;
      return;
    }
  }
  stats_.push_back(ImportStat{std::string(def.name), def.severity, stat_description(id, detail), n});
}

void ImportStats::add(const ImportStat& stat) {
  for (auto& s : stats_) {
    if (s.name == stat.name) {
      s.count += stat.count;
      return;
    }
  }
  stats_.push_back(stat);
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
  for (const auto& s : other.stats_) add(s);
  for (const auto& l : other.losses_) add_loss(losses_, l.what, l.lost, l.total);
}

}  // namespace chokepoint::timeline
