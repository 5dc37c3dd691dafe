// The inputs of `analyze` as the ranks of a distributed job: which files belong to which
// rank and which clock domain (node). A rank comes from a Kineto trace's distributedInfo
// (read from the file's head, where torch.profiler writes it) or, for a recording's CUPTI
// traces (trace-<pid>.cptrace), from the RANK its process had (the recording's process
// list). CUPTI traces with neither (the per-process files of a multi-GPU `run --trace`
// copied out of their recording, or a job launched without RANK) are ranks when each
// process ran NCCL kernels on a GPU of its own: numbered in the order of their GPUs, and
// the report says so. Each path argument is one clock domain: give one directory per node.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pipeline/input_plan.h"

namespace chokepoint::pipeline {

struct RankInput {
  int32_t rank = -1;
  int32_t domain = 0;  // index of the path argument it came from
  std::vector<std::string> files;
  // How the rank was known when no trace or recording names it: "GPU 1, pid 654" (ranks
  // numbered by GPU); "" when named.
  std::string by_device;
};

// The rank of a trace file from its first bytes, -1 when it names none.
int32_t rank_in_head(const std::string& head);

// The pid of a CUPTI trace file name (".../trace-4242.cptrace", "trace-4242-w2.cptrace.gz"), -1 none.
int64_t pid_of_trace_file(const std::string& path);

// The trace files of the inputs grouped by rank, in rank order; empty unless they hold
// two ranks or more (then `analyze` pools them as one job, as before).
std::vector<RankInput> rank_inputs(const InputPlan& plan);

}  // namespace chokepoint::pipeline
