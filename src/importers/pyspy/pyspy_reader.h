// Reads py-spy's `record --format chrometrace` output (py-spy 0.4: a JSON array of
// Begin/End events, one per frame that starts or stops being on a thread's stack, `ts`
// in microseconds since py-spy started recording) into the stack samples model
// (samples/stacks.h). With `--threads` the outermost frame of every stack names the
// thread ("thread (OS_TID): NAME"), with `--subprocesses` the one outside it the process
// ("process PID:\"CMDLINE\""); both become the thread's identity, not frames.
//
// `origin_ns` is the CLOCK_REALTIME time of py-spy's ts 0 (sampler/pyspy/ records it when
// it starts py-spy). Events that are not B/E, frames without a name and End events
// without their Begin are skipped and counted; a file cut short keeps what came before.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "samples/stacks.h"

namespace chokepoint::importers {

struct PySpyReadStats {
  uint64_t events = 0;
  uint64_t skipped = 0;    // malformed events, unknown phases, unmatched ends
  bool truncated = false;  // the array was cut off (py-spy killed mid-write)
};

// Parses the text of a chrometrace file.
Result<samples::PyStacks> parse_pyspy_chrometrace(std::string_view json, int64_t origin_ns,
                                                  PySpyReadStats* stats = nullptr);
// Reads a file (plain or gzip).
Result<samples::PyStacks> read_pyspy_chrometrace(const std::string& path, int64_t origin_ns,
                                                 PySpyReadStats* stats = nullptr);

}  // namespace chokepoint::importers
