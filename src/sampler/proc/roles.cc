#include "sampler/proc/roles.h"

#include <string_view>

namespace chokepoint::sampler::proc {
namespace {

std::string_view basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool is_python(const std::vector<std::string>& argv) {
  return !argv.empty() && basename(argv[0]).substr(0, 6) == "python";
}

bool is_torchrun_agent(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    // The `torchrun` console script runs as "python /path/bin/torchrun ..." or directly.
    if (basename(a) == "torchrun" && (i == 0 || (i == 1 && is_python(argv)))) return true;
    if (a == "-m" && i + 1 < argv.size() &&
        (argv[i + 1] == "torch.distributed.run" || argv[i + 1] == "torch.distributed.launch")) {
      return true;
    }
  }
  return false;
}

samples::ProcessRole infer_role(bool is_root, const std::string& comm, const std::vector<std::string>& argv,
                                const std::vector<std::string>* parent_argv) {
  using samples::ProcessRole;
  if (is_root) return ProcessRole::kLaunched;
  if (comm == "pt_data_worker") return ProcessRole::kDataLoaderWorker;
  if (parent_argv != nullptr && is_torchrun_agent(*parent_argv) && is_python(argv) && !is_torchrun_agent(argv)) {
    return ProcessRole::kTorchrunRank;
  }
  return ProcessRole::kChild;
}

}  // namespace chokepoint::sampler::proc
