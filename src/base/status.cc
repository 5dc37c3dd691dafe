#include "base/status.h"

namespace chokepoint {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kFailed: return "failed";
    case ErrorCode::kUsage: return "usage";
    case ErrorCode::kInput: return "input";
    case ErrorCode::kNotFound: return "not-found";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kCannotRun: return "cannot-run";
    case ErrorCode::kInternal: return "internal";
  }
  return "failed";
}

}  // namespace chokepoint
