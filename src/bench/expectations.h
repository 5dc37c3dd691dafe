// What each benchmark testcase is compared with: a published figure of the GPU (from
// machine/ceilings), an expected figure (latencies have no datasheet value), or nothing
// (reported for information). One explicit list, one entry per testcase key; the
// module's registry must use the same keys (a test checks this where the module builds).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "machine/ceilings.h"
#include "machine/profile.h"

namespace chokepoint::bench {

enum class Basis {
  kPublished,  // percent of a published ceiling; higher is better
  kExpected,   // a latency: percent = expected / measured; lower is better
  kPinned,     // pageable copies: percent of the pinned rate measured in the same run
  kNone,       // no reference (L2): information only
  kSelftest,   // correctness check: ok or failed
};

// Which catalogue of likely causes explains a result below par (causes.h).
// What a testcase measures (machine/profile.h: the engine's bench evaluators read it).
using Group = machine::BenchGroup;

struct Expectation {
  std::string_view key;
  Basis basis;
  Group group;
  // kPublished: the published figure in the testcase's unit, nullopt when the datasheet
  // has none for this GPU.
  std::optional<double> (*published)(const machine::Ceilings&) = nullptr;
  double expected = 0;              // kExpected: the figure a healthy machine reaches
  double par_pct = 0;               // below this percentage of the reference: "below par"
  std::string_view reference_note;  // where the reference comes from, shown in JSON
};

const std::vector<Expectation>& expectations();

// The entry for key; selftest_* keys share one entry; nullptr for an unknown key.
const Expectation* expectation_for(std::string_view key);

// Above this percentage of a published figure a result is suspicious (faster than the
// datasheet): a different GPU variant than the table entry, or a measurement error.
inline constexpr double kAbovePublishedPct = 105.0;

}  // namespace chokepoint::bench
