#include "rules/finding.h"

namespace chokepoint::rules {

const char* category_name(Category c) {
  switch (c) {
    case Category::kInput: return "input";
    case Category::kHost: return "host";
    case Category::kSync: return "sync";
    case Category::kTransfer: return "transfer";
    case Category::kCompute: return "compute";
    case Category::kMemory: return "memory";
    case Category::kCommunication: return "communication";
    case Category::kIo: return "io";
    case Category::kIdle: return "idle";
    case Category::kUnknown: return "unknown";
  }
  return "unknown";
}

bool estimate_is_throughput(const std::string& remedy) { return remedy == "bigger-batch"; }

const char* threshold_side_name(ThresholdSide s) {
  switch (s) {
    case ThresholdSide::kAtLeast: return "at_least";
    case ThresholdSide::kAtMost: return "at_most";
    case ThresholdSide::kCeiling: return "ceiling";
  }
  return "at_least";
}

}  // namespace chokepoint::rules
