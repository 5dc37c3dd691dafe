// libFuzzer target for the CUPTI trace importer (importers/cupti; the format of
// tracer/trace_format.h). Besides crashes, hangs and memory blowups, it checks what was read
// (fuzz/timeline_checks.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "importers/cupti/cupti_importer.h"
#include "timeline_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  chokepoint::timeline::Timeline tl;
  tl.sources.emplace_back().path = "fuzz.cptrace";
  chokepoint::timeline::ImportStats stats;
  (void)chokepoint::importers::import_cupti_buffer(std::string_view(reinterpret_cast<const char*>(data), size), 0, tl,
                                                   stats);
  chokepoint::fuzz::check_timeline(tl, "cupti_fuzzer");
  return 0;
}
