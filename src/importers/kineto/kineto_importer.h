// The Kineto importer: PyTorch profiler Chrome-trace JSON (plain or gzip), streamed.
// docs/FORMATS.md "Kineto trace" describes the format and its hazards; kineto_stats.h lists what
// is counted instead of failing.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "importers/importer.h"
#include "importers/input/byte_source.h"
#include "importers/kineto/reader_limits.h"
#include "timeline/import_stats.h"
#include "timeline/model.h"

namespace chokepoint::importers {

using KinetoLimits = kineto::ReaderLimits;

std::unique_ptr<Importer> make_kineto_importer();

// True when `head` (the first decompressed bytes of a file) looks like a Kineto or Chrome
// trace: a JSON object naming traceEvents, or Kineto's schemaVersion with its device
// metadata, or an object or array of events with a "ph" key.
bool sniff_kineto(std::string_view head);

// Reads a Kineto trace from `in` (decompressed already) into `tl` as source
// `source_index`, which must exist in tl.sources. Odd input is counted in `stats`; a
// non-ok status means the input is not a trace (or an I/O error), and `tl` may then hold
// a partial import of this source.
Status import_kineto(ByteSource& in, int32_t source_index, timeline::Timeline& tl, timeline::ImportStats& stats,
                     const ImportOptions& opts = {}, const KinetoLimits& limits = {});

// Same, from bytes in memory (plain or gzip); used by tests and the fuzzer. When
// tl.sources has no entry `source_index` yet, one named "<memory>" is appended.
Status import_kineto_buffer(std::string_view bytes, int32_t source_index, timeline::Timeline& tl,
                            timeline::ImportStats& stats, const KinetoLimits& limits = {});

}  // namespace chokepoint::importers
