// Sizes that bound the Kineto reader's memory: input is read chunk by chunk, events are
// parsed batch by batch, and no single value may grow past max_value_bytes.
#pragma once

#include <cstddef>

namespace chokepoint::importers::kineto {

struct ReaderLimits {
  size_t chunk_bytes = 8 << 20;       // read size
  size_t batch_bytes = 1 << 20;       // bytes of events per simdjson document
  size_t max_value_bytes = 16 << 20;  // a larger event or metadata value is treated as corrupt
};

}  // namespace chokepoint::importers::kineto
