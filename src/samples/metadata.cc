#include "samples/metadata.h"

#include <array>
#include <utility>

namespace chokepoint::samples {
namespace {
constexpr std::array<std::pair<ProcessRole, std::string_view>, 4> kRoles = {{
    {ProcessRole::kLaunched, "launched"},
    {ProcessRole::kChild, "child"},
    {ProcessRole::kDataLoaderWorker, "dataloader_worker"},
    {ProcessRole::kTorchrunRank, "torchrun_rank"},
}};
}  // namespace

std::string_view role_name(ProcessRole role) {
  for (const auto& [r, name] : kRoles) {
    if (r == role) return name;
  }
  return "child";
}

std::optional<ProcessRole> parse_role(std::string_view name) {
  for (const auto& [r, n] : kRoles) {
    if (n == name) return r;
  }
  return std::nullopt;
}

}  // namespace chokepoint::samples
