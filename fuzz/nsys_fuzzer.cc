// libFuzzer target for the Nsight Systems SQLite importer (importers/nsys): damaged
// databases, and exports whose tables hold what no nsys writes. Besides crashes, hangs and
// memory blowups, it checks what was read (fuzz/timeline_checks.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "importers/nsys/nsys_importer.h"
#include "timeline_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  chokepoint::timeline::Timeline tl;
  tl.sources.emplace_back().path = "fuzz.sqlite";
  chokepoint::timeline::ImportStats stats;
  (void)chokepoint::importers::import_nsys_buffer(std::string_view(reinterpret_cast<const char*>(data), size), 0, tl,
                                                  stats);
  chokepoint::fuzz::check_timeline(tl, "nsys_fuzzer");
  return 0;
}
