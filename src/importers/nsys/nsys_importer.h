// Importer of Nsight Systems' SQLite export (`nsys export --type sqlite report.nsys-rep`):
// its CUPTI_ACTIVITY_KIND_* tables hold the same CUPTI records the tracer writes to a
// .cptrace (kernels, copies, sets, synchronizations, CUDA runtime and driver calls), with
// NVTX ranges, thread names and the GPUs, so every analysis and rule reads it unchanged.
// The tables and their columns across nsys versions: docs/FORMATS.md, "Nsight Systems
// export". A missing optional table or column reads as unknown.
#pragma once

#include <memory>
#include <string_view>

#include "importers/importer.h"

namespace chokepoint::importers {

std::unique_ptr<Importer> make_nsys_importer();

// True when `head` starts like a SQLite database ("SQLite format 3\0"). Whether it is an
// nsys export is known only once its tables are read: a database without any
// CUPTI_ACTIVITY_KIND_* table is refused then, by name.
bool sniff_nsys(std::string_view head);

// Reads one export's bytes (tests, the fuzzer), as import() reads a file.
Status import_nsys_buffer(std::string_view bytes, int32_t source_index, timeline::Timeline& tl,
                          timeline::ImportStats& stats);

}  // namespace chokepoint::importers
