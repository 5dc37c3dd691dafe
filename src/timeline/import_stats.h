// Import statistics: bad or odd input is counted here instead of failing the import
// (after Perfetto's storage/stats.h). Every report shows the non-zero entries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/data_loss.h"
#include "base/severity.h"
#include "base/stat_catalogue.h"

namespace chokepoint::timeline {

struct ImportStat {
  std::string name;  // stable id, e.g. "kineto_truncated"
  Severity severity;
  std::string description;  // one sentence for humans
  int64_t count = 0;
};

// A central, append-only list of named counters. Readers raise the stats of the one
// catalogue (base/stat_catalogue.h) and call add(); reporters print the non-zero ones.
class ImportStats {
 public:
  // Increments the counter of `id`, creating it with the catalogue's name, severity and
  // description first (`detail` fills the description's "{}"; the first one stays).
  void add(StatId id, int64_t n = 1) { add(id, std::string_view(), n); }
  void add(StatId id, std::string_view detail, int64_t n = 1);
  int64_t count(const std::string& name) const;
  int64_t count(StatId id) const { return count(std::string(stat_def(id).name)); }
  const std::vector<ImportStat>& all() const { return stats_; }
  bool has_errors() const;
  void merge(const ImportStats& other);

  // How much of each kind of input was lost, out of how many (base/data_loss.h): the
  // diagnosis lowers its confidence by the largest share.
  void lost(const std::string& what, int64_t n, int64_t of) { add_loss(losses_, what, n, of); }
  const std::vector<DataLoss>& losses() const { return losses_; }

 private:
  void add(const ImportStat& s);
  std::vector<ImportStat> stats_;
  std::vector<DataLoss> losses_;
};

}  // namespace chokepoint::timeline
