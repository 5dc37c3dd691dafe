// Importer of the CUPTI tracer's files (`chokepoint run --trace`, tracer/trace_format.h)
// into the timeline model, so every analysis and rule works on them unchanged.
#pragma once

#include <memory>
#include <string_view>

#include "importers/importer.h"

namespace chokepoint::importers {

std::unique_ptr<Importer> make_cupti_importer();

bool sniff_cupti(std::string_view head);

// Reads one trace file's bytes (tests, the fuzzer). CUPTI timestamps go onto the
// sampler's clock (CLOCK_REALTIME) through the header's (realtime, cupti) pair when the
// two differ by more than a second; on Linux CUPTI stamps CLOCK_REALTIME already.
Status import_cupti_buffer(std::string_view bytes, int32_t source_index, timeline::Timeline& tl,
                           timeline::ImportStats& stats);

}  // namespace chokepoint::importers
