// The small top-level members of a Kineto trace (everything but traceEvents) that the
// model needs: baseTimeNanoseconds, deviceProperties[] and distributedInfo{}.
#pragma once

#include <string_view>

#include "importers/kineto/event_mapper.h"
#include "importers/kineto/kineto_stats.h"

namespace chokepoint::importers::kineto {

// True for the keys whose values read_metadata_member() wants.
bool is_metadata_key(std::string_view key);

// Parses `value_json` (the raw JSON of top-level member `key`) into `meta`. Unreadable
// values raise Stat::kBadMetadata.
void read_metadata_member(std::string_view key, std::string_view value_json, TraceMetadata& meta, StatCounter& stats);

}  // namespace chokepoint::importers::kineto
