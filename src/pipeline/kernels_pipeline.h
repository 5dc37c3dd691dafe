// The pipeline of `chokepoint kernels` (issue 17): the top kernels of a trace, a
// recording or an Nsight Compute CSV on this machine's roofline (analyses/kernel_bounds.h),
// and, for `kernels --ncu -- CMD`, the plan of the ncu runs that measure the top kernels
// of a traced run: which kernel, matched how, after how many launches of its name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/kernel_bounds.h"
#include "base/status.h"
#include "pipeline/machine_context.h"
#include "timeline/kernel_metrics.h"

namespace chokepoint::pipeline {

struct KernelsOptions {
  CeilingsOptions ceilings;
  size_t top = 10;  // kernels reported, most time first (0: all)
};

// True when `path` is a file holding an `ncu --csv --page raw` export.
bool is_ncu_csv(const std::string& path);

// Reads `paths`: one or more ncu CSV exports, or what `analyze` reads (traces, a
// recording of `run --trace`). Fails when nothing readable holds a kernel.
Result<analyses::KernelsView> kernels_from_paths(const std::vector<std::string>& paths, const KernelsOptions& o);

// The kernels of imported ncu exports: launches of one kernel grouped (the figures of
// its median-length launch, the time of all of them).
Result<analyses::KernelsView> kernels_from_ncu(const timeline::KernelMetricsFile& f,
                                               const std::vector<std::string>& inputs, const KernelsOptions& o);

// One kernel for ncu to profile: `ncu -k regex:REGEX --launch-skip SKIP --launch-count 1`.
struct NcuTarget {
  std::string name;         // as the trace names it (demangled)
  std::string function;     // ncu's function name base ("axpy", "vectorized_elementwise_kernel")
  std::string regex;        // matches `function` as ncu's -k regex: sees it
  int64_t launch_skip = 0;  // launches matching `regex` before the one profiled
  int64_t calls = 0;        // launches of this kernel in the traced run
  double ns = 0;            // their time
  double time_pct = -1;     // of all kernel time in the traced run
};

// The function name ncu matches by default (--kernel-name-base function): the demangled
// name without return type, parameter list, template arguments and namespaces.
std::string ncu_function_name(std::string_view demangled);

// The top `top` kernels of a traced run, each with the launch skip that lands on the
// middle one of its launches (launches counted in the order they were made, over every
// kernel whose function name the regex matches).
struct NcuPlan {
  std::vector<NcuTarget> targets;
  machine::Ceilings ceilings;
  double kernel_ns = 0;
  size_t kernels_total = 0;
};
Result<NcuPlan> plan_ncu(const std::vector<std::string>& trace_files, const KernelsOptions& o);

// The metrics `kernels --ncu` asks ncu for; `tensor`: also the tensor-path FLOP counters
// (sm__ops_path_tensor_*, Hopper's names), left out where ncu does not know them.
std::string ncu_metrics(bool tensor);

// The ncu command line for one target (the profiled command after it).
std::vector<std::string> ncu_command_line(const std::string& ncu, const NcuTarget& t, const std::string& metrics,
                                          const std::vector<std::string>& command);

// The view of the measured targets: metrics[i] is target i's launch (targets that ncu
// could not profile are left out by the caller).
analyses::KernelsView kernels_from_plan(const NcuPlan& plan, const std::vector<NcuTarget>& targets,
                                        const std::vector<timeline::KernelMetrics>& metrics,
                                        const std::vector<std::string>& inputs);

}  // namespace chokepoint::pipeline
