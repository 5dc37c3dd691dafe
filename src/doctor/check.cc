#include "doctor/check.h"

namespace chokepoint::doctor {

std::string_view status_name(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk: return "ok";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kSkip: return "skip";
  }
  return "skip";
}

int exit_code_for(const std::vector<Check>& checks) {
  for (const auto& c : checks) {
    if (c.status == CheckStatus::kFail) return 1;
  }
  return 0;
}

}  // namespace chokepoint::doctor
