#include "analyses/fingerprint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace chokepoint::analyses {
namespace {

TEST(Fingerprint, ProgramOfACommandLine) {
  EXPECT_EQ(program_of({"python3", "-u", "/src/train.py", "--lr", "3e-4"}), "train.py");
  EXPECT_EQ(program_of({"/usr/bin/python3.11", "-m", "torch.distributed.run", "x.py"}), "-m torch.distributed.run");
  EXPECT_EQ(program_of({"python", "-c", "import torch"}), "python -c");
  EXPECT_EQ(program_of({"./build/a.out", "--n", "3"}), "a.out");
  EXPECT_EQ(program_of({"torchrun", "--nproc_per_node", "2", "train.py"}), "torchrun");
  EXPECT_EQ(program_of({}), "");
}

TEST(Fingerprint, KernelsAndShapesOfATimeline) {
  timeline::Timeline tl;
  auto op = [&](timeline::GpuOpKind kind, const char* name) {
    tl.gpu_ops.kind.push_back(kind);
    tl.gpu_ops.name.push_back(tl.strings.intern(name));
    tl.gpu_ops.start.push_back(0);
    tl.gpu_ops.end.push_back(1);
  };
  auto kernel = [&](const char* name) { op(timeline::GpuOpKind::kKernel, name); };
  kernel("ampere_sgemm_128x64_nn");
  kernel("vectorized_elementwise_kernel");
  kernel("ampere_sgemm_128x64_nn");                                      // twice: one entry
  op(timeline::GpuOpKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)");  // not a kernel
  const int64_t mat[] = {64, 1024}, vec[] = {1024};
  tl.op_inputs.begin_op();
  tl.op_inputs.add_input(tl.strings.intern("float"), mat, 2);
  tl.op_inputs.add_input(tl.strings.intern("float"), vec, 1);  // rank 1: a bias, not a shape of the model
  tl.op_inputs.end_op();
  const Fingerprint f = job_fingerprint(tl);
  EXPECT_EQ(f.kernels.size(), 2u);
  ASSERT_EQ(f.shapes.size(), 1u);
  EXPECT_EQ(f.shapes[0], mark_hash("64x1024"));
  EXPECT_TRUE(std::is_sorted(f.kernels.begin(), f.kernels.end()));
}

TEST(Fingerprint, SketchJaccard) {
  EXPECT_DOUBLE_EQ(sketch_jaccard({1, 2, 3}, {2, 3, 4}), 0.5);
  EXPECT_DOUBLE_EQ(sketch_jaccard({1, 2}, {1, 2}), 1.0);
  EXPECT_DOUBLE_EQ(sketch_jaccard({}, {}), -1);
  // Beyond the sketch, the estimate over the union's smallest kSketch hashes: 1000 names
  // against 1000 of which 500 are shared, J = 1/3; a bottom-512 sketch is good to a few %.
  std::vector<uint64_t> a, b;
  for (int i = 0; i < 1000; ++i) a.push_back(mark_hash("kernel_" + std::to_string(i)));
  for (int i = 500; i < 1500; ++i) b.push_back(mark_hash("kernel_" + std::to_string(i)));
  for (auto* v : {&a, &b}) {
    std::sort(v->begin(), v->end());
    v->resize(kSketch);
  }
  EXPECT_NEAR(sketch_jaccard(a, b), 1.0 / 3, 0.06);
}

TEST(Fingerprint, MatchJobs) {
  Fingerprint x{{1, 2, 3, 4}, {10, 11, 12, 13}, "train.py"};
  Fingerprint fix = x;  // autocast: other GEMM kernels, the same shapes
  fix.kernels = {1, 2, 7, 8};
  EXPECT_FALSE(match_jobs(x, fix).different);
  EXPECT_TRUE(match_jobs(x, fix).judged);
  Fingerprint batch = x;  // a bigger batch: other shapes, the same kernels
  batch.shapes = {20, 21, 22, 23};
  EXPECT_FALSE(match_jobs(x, batch).different);
  Fingerprint other{{1, 5, 6, 9}, {30, 31, 32}, ""};  // shares a kernel, no shape
  const JobMatch m = match_jobs(x, other);
  EXPECT_TRUE(m.different);
  EXPECT_EQ(m.why, "they share only 14% of their kernel names and 0% of their tensor shapes");
  Fingerprint script = x;
  script.program = "eval.py";
  EXPECT_EQ(match_jobs(x, script).why, "other programs (train.py, eval.py)");
  EXPECT_FALSE(match_jobs(Fingerprint{}, x).judged);  // nothing to go on: not judged
}

}  // namespace
}  // namespace chokepoint::analyses
