// What a job is, apart from how fast it ran: `diff` checks that its two sides ran the same
// program before it counts a finding as resolved or a remedy's promise as kept (issue 45:
// `diff input_bound launch_bound` "confirmed" a remedy between two unrelated programs).
//
// Three marks, each a set compared by Jaccard similarity:
//   - the kernels the GPU ran (names),
//   - the tensor shapes of the CPU ops (record_shapes; inputs of rank >= 2): the model's
//     dimensions, which survive most fixes (autocast changes the GEMM kernels' names but
//     not the shapes, CUDA graphs hide the ops but not the kernels),
//   - the program (the script of a recorded command line).
// Sets hold 64-bit hashes (mark_hash), and at most kSketch of them: the smallest, a bottom-k
// sketch whose Jaccard estimates the full sets' (Broder 1997), so a report stays small.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "timeline/model.h"

namespace chokepoint::analyses {

inline constexpr size_t kSketch = 512;

struct Fingerprint {
  std::vector<uint64_t> kernels;  // sorted, distinct
  std::vector<uint64_t> shapes;   // sorted, distinct
  std::string program;            // "train.py", "python -m pkg.mod", "./a.out"; "" unknown
  bool empty() const { return kernels.empty() && shapes.empty() && program.empty(); }
};

// FNV-1a with a 64-bit finalizer: evenly spread, as a bottom-k sketch needs.
uint64_t mark_hash(std::string_view s);

// The kernels and shapes of a timeline (program: program_of()).
Fingerprint job_fingerprint(const timeline::Timeline& tl);

// The script of a command line: the first argument ending in .py after a python
// interpreter, "-m MODULE" for a module, else the executable's file name; "" for none.
std::string program_of(const std::vector<std::string>& command);

// |a & b| / |a | b| over the bottom-k sketch of the union; nullopt-like -1 when both are empty.
double sketch_jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

// Whether two fingerprints are of one program. `different` only on evidence: other
// scripts; tensor shapes that barely overlap (below kSameJob) with kernels that do not
// overlap much either (below kSameKernels); or, without shapes, kernels below kSameJob.
// Measured over every pair of the 40 Kineto fixtures (docs/VALIDATION.md "diff: the same
// job"): each fix keeps >= 0.33 of its shapes (a bigger batch: 0.33, with all its kernels),
// unrelated programs share <= 0.31 of their shapes where their kernels overlap less than
// half.
inline constexpr double kSameJob = 0.3;
inline constexpr double kSameKernels = 0.5;
struct JobMatch {
  bool judged = false;               // enough evidence to say either way
  bool different = false;            // judged and not the same program
  double kernels = -1, shapes = -1;  // similarities, -1 not compared
  std::string why;                   // one clause for people: "other scripts (a.py, b.py)", ...
};
JobMatch match_jobs(const Fingerprint& a, const Fingerprint& b);

// The inputs of one timeline (its sources) grouped by the job they hold, by the kernels
// each ran (the same test as match_jobs without shapes: a pair sharing kSameJob of its
// kernels is one job, and so, transitively, are their groups). A source without kernels
// joins the first group. `analyze` refuses to pool two groups or more (issue 44: a
// directory of unrelated traces was pooled into "MFU 113%" and "GPU idle 99.9% of 631 s").
std::vector<std::vector<int32_t>> job_groups(const timeline::Timeline& tl);

}  // namespace chokepoint::analyses
