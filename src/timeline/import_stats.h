// Import statistics: bad or odd input is counted here instead of failing the import
// (after Perfetto's storage/stats.h). Every report shows the non-zero entries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/data_loss.h"
#include "base/severity.h"

namespace chokepoint::timeline {

struct ImportStat {
  std::string name;         // stable id, e.g. "kineto_truncated"
  Severity severity;
  std::string description;  // one sentence for humans
  int64_t count = 0;
};

// A central, append-only list of named counters. Importers declare the stats they may
// raise in their own file and call add(); reporters print the non-zero ones.
class ImportStats {
 public:
  // Increments the counter `name`, creating it with `severity` and `description` first.
  void add(const std::string& name, Severity severity, const std::string& description,
           int64_t n = 1);
  int64_t count(const std::string& name) const;
  const std::vector<ImportStat>& all() const { return stats_; }
  bool has_errors() const;
  void merge(const ImportStats& other);

  // How much of each kind of input was lost, out of how many (base/data_loss.h): the
  // diagnosis lowers its confidence by the largest share.
  void lost(const std::string& what, int64_t n, int64_t of) { add_loss(losses_, what, n, of); }
  const std::vector<DataLoss>& losses() const { return losses_; }

 private:
  std::vector<ImportStat> stats_;
  std::vector<DataLoss> losses_;
};

}  // namespace chokepoint::timeline
