#include "importers/kineto/kineto_stats.h"

namespace chokepoint::importers::kineto {
namespace {

// In the order of Stat (kineto_stats_test checks that each maps to its own catalogue entry).
constexpr StatId kIds[] = {
    StatId::kKinetoEventsIgnored,   StatId::kKinetoNonNumericPid,    StatId::kKinetoMalformedEvent,
    StatId::kKinetoNonObjectEvent,  StatId::kKinetoInvalidUtf8,      StatId::kKinetoBadNumber,
    StatId::kKinetoIntOverflow,     StatId::kKinetoIdOutOfRange,     StatId::kKinetoMissingTimestamp,
    StatId::kKinetoMissingDuration, StatId::kKinetoNegativeDuration, StatId::kKinetoDuplicateKey,
    StatId::kKinetoTruncated,       StatId::kKinetoGzipCorrupt,      StatId::kKinetoEmptyTrace,
    StatId::kKinetoNoSteps,         StatId::kKinetoUnknownDevice,    StatId::kKinetoBadMetadata,
    StatId::kKinetoNoBaseTime,      StatId::kKinetoEventsCut,
};
static_assert(sizeof(kIds) / sizeof(kIds[0]) == static_cast<size_t>(Stat::kCount));

}  // namespace

StatId stat_id(Stat s) { return kIds[static_cast<size_t>(s)]; }

void StatCounter::flush_to(timeline::ImportStats& stats) const {
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) {
      stats.add(kIds[i], counts_[i]);
    }
  }
}

}  // namespace chokepoint::importers::kineto
