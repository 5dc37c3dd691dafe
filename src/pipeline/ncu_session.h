// `chokepoint kernels --ncu -- CMD`: the command once under the CUPTI tracer to find its
// top kernels (plan_ncu, kernels_pipeline.h), then once per kernel under Nsight Compute
// (ncu), each measured launch read back from ncu's CSV. What ran is kept in a directory
// of its own. The CLI only parses the options and prints.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analyses/kernel_bounds.h"
#include "base/status.h"
#include "pipeline/kernels_pipeline.h"

namespace chokepoint::pipeline {

// ncu: `given` when it is an executable, else ncu on `path_env` (PATH's form), else in
// /usr/local/cuda/bin; "" when none.
std::string find_ncu(const std::string& given, const std::string& path_env);

// A new directory for what the run leaves: `base`, else base.1, base.2 ...; its absolute path.
Result<std::string> fresh_dir(const std::string& base);

struct NcuSessionOptions {
  std::vector<std::string> command;  // what to profile
  std::string ncu;                   // find_ncu's
  std::string dir;                   // fresh_dir's: the traced run and ncu's exports
  KernelsOptions kernels;
};

// Lines for the user (the CLI prints them): progress (`progress`: a --quiet run leaves it
// out), or what went wrong with one step while the session goes on.
using SayFn = std::function<void(const std::string& line, bool progress)>;

// The two steps. An error names what failed and where its output is kept: no tracer
// library (kUnsupported), a run that traced nothing (kInput), ncu not allowed to read the
// counters (ERR_NVGPUCTRPERM) or measuring none of the kernels (kFailed).
Result<analyses::KernelsView> run_ncu_session(const NcuSessionOptions& o, const SayFn& say);

}  // namespace chokepoint::pipeline
