#include "cli/exit_status.h"

namespace chokepoint::cli {

int exit_status(ErrorCode code, ExitConvention convention) {
  switch (code) {
    case ErrorCode::kOk: return kExitOk;
    case ErrorCode::kUsage: return kExitUsage;
    case ErrorCode::kInternal: return convention == ExitConvention::kWrapper ? kExitWrapperFailed : kExitInternal;
    case ErrorCode::kCannotRun: return convention == ExitConvention::kWrapper ? kExitCannotRun : kExitFailed;
    case ErrorCode::kFailed:
    case ErrorCode::kInput:
    case ErrorCode::kNotFound:
    case ErrorCode::kIo:
    case ErrorCode::kUnsupported: break;
  }
  return convention == ExitConvention::kWrapper ? kExitWrapperFailed : kExitFailed;
}

}  // namespace chokepoint::cli
