// A process and every process below it, from one scan of /proc/*/stat's parent pids (this
// kernel, like many, lacks /proc/PID/task/TID/children). A snapshot: `chokepoint trace`
// finds the traced processes of a job with it; the live sampler keeps its own tree across
// ticks (process_sampler.h).
#pragma once

#include <cstdint>
#include <vector>

#include "sampler/proc/proc_fs.h"

namespace chokepoint::sampler::proc {

// `root` first, then its descendants breadth first (by pid within a level).
std::vector<int64_t> process_tree(ProcFs& fs, int64_t root);

}  // namespace chokepoint::sampler::proc
