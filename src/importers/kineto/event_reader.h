// Reads one Kineto event object with simdjson On-Demand into a RawEvent: a single pass
// over the fields in document order, numbers taken from their raw text (exact times,
// no failure on bare N/A or 20-digit ids), unknown fields skipped unparsed.
#pragma once

#include <simdjson.h>

#include <string_view>

#include "importers/kineto/raw_event.h"

namespace chokepoint::importers::kineto {

// Fills `ev` (reset first) from `obj`, an object of the document `document` (the bytes
// given to the parser). A non-SUCCESS code means the object is not valid JSON; `ev` is
// then incomplete and must be dropped.
simdjson::error_code read_event(simdjson::ondemand::object& obj, std::string_view document, RawEvent& ev);

// The raw text of `v`, or an error when it does not lie inside `document`. On-Demand
// does not validate what it skips, and on some malformed documents (found by fuzzing) a
// value's raw token runs past the end of the input; every raw token goes through here.
simdjson::error_code checked_token(simdjson::ondemand::value& v, std::string_view document, std::string_view* token);

}  // namespace chokepoint::importers::kineto
