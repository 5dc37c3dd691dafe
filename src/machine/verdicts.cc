#include "machine/verdicts.h"

namespace chokepoint::machine {

VerdictCounts count_verdicts(const Profile& p) {
  VerdictCounts c;
  for (const auto& g : p.gpus) {
    for (const auto& m : g.results) {
      if (m.verdict == kVerdictOk) ++c.ok;
      else if (m.verdict == kVerdictBelowPar) ++c.below_par;
      else if (m.verdict == kVerdictAbovePublished) ++c.above;
      else if (m.verdict == kVerdictInfo) ++c.info;
      else if (m.verdict == kVerdictWaived) ++c.waived;
      else if (m.verdict == kVerdictFailed) ++c.failed;
    }
  }
  return c;
}

}  // namespace chokepoint::machine
