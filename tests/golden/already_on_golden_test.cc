// No advice to switch on what the trace shows is already on: a fused optimizer (its
// kernels in healthy_bf16, recorded with AdamW(fused=True)) and CUDA graphs (an edited
// copy of launch_bound whose launches partly read cudaGraphLaunch, as a graph-replaying
// job's runtime calls do; the recorded fixtures have none).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"
#include "report/reporter.h"

namespace chokepoint {
namespace {

const std::string kDir = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/";

report::Report analyze(const std::string& path) {
  auto r = chokepoint::golden::analyze_fixture({path});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : report::Report{};
}

bool has_what_if(const report::Report& r, const std::string& id) {
  return std::any_of(r.what_ifs.begin(), r.what_ifs.end(), [&](const auto& w) { return w.id == id; }) ||
         std::any_of(r.remedies.begin(), r.remedies.end(), [&](const auto& w) { return w.id == id; });
}

TEST(AlreadyOn, FusedOptimizerIsNotAdvisedWhenItRunsFused) {
  // healthy_bf16's optimizer step runs multi_tensor_apply_kernel<...FusedAdamMathFunctor>.
  EXPECT_FALSE(has_what_if(analyze(kDir + "healthy_bf16.json.gz"), "fused-optimizer"));
  // fp32_gemm's runs unfused (foreach kernels): the what-if is still replayed there.
  EXPECT_TRUE(has_what_if(analyze(kDir + "fp32_gemm.json.gz"), "fused-optimizer"));
}

TEST(AlreadyOn, CudaGraphsAreNotAdvisedWhenTheJobReplaysGraphs) {
  const auto plain = analyze(kDir + "launch_bound.json.gz");
  ASSERT_TRUE(has_what_if(plain, "cuda-graphs"));  // launch-bound: graphs would pay

  const std::string src = ::testing::TempDir() + "/graphs_" + std::to_string(getpid()) + ".src.json";
  ASSERT_EQ(std::system(("gzip -dc " + kDir + "launch_bound.json.gz > " + src).c_str()), 0);
  nlohmann::json j;
  {
    std::ifstream in(src);
    j = nlohmann::json::parse(in);
  }
  std::remove(src.c_str());
  int launches = 0, renamed = 0;
  for (auto& e : j.at("traceEvents")) {
    if (e.value("cat", "") != "cuda_runtime" || e.value("name", "") != "cudaLaunchKernel") continue;
    if (launches++ % 10 == 0) {
      e["name"] = "cudaGraphLaunch";
      ++renamed;
    }
  }
  ASSERT_GT(renamed, 0);
  const std::string edited = ::testing::TempDir() + "/graphs_" + std::to_string(getpid()) + ".json";
  std::ofstream(edited) << j.dump();
  const auto with_graphs = analyze(edited);
  std::remove(edited.c_str());
  EXPECT_FALSE(has_what_if(with_graphs, "cuda-graphs"));  // neither replayed nor advised
  bool launch_finding = false;                            // the launch overhead itself is still reported
  for (const auto& f : with_graphs.findings) launch_finding |= f.id == "launch-overhead";
  EXPECT_TRUE(launch_finding);
}

// torch.compile already on (issue 43): mlp_compile's fixed trace, recorded with the model
// compiled ("Torch-Compiled Region" and "CompiledFunction" ranges, Triton kernels), was told
// "Fuse elementwise chains with torch.compile: model = torch.compile(model)", est. 1.04x.
// Now it is not advised, and the report says it is in place; the eager trace still gets it.
TEST(AlreadyOn, TorchCompileIsNotAdvisedWhenTheModelIsCompiled) {
  const std::string pairs = std::string(CHOKEPOINT_TEST_DATA) + "/pairs/mlp_compile/";
  const auto compiled = analyze(pairs + "fixed.json.gz");
  EXPECT_FALSE(has_what_if(compiled, "torch-compile"));
  EXPECT_NE(std::find(compiled.already_on.begin(), compiled.already_on.end(), "torch-compile"),
            compiled.already_on.end());
  std::ostringstream text;
  ASSERT_TRUE(report::make_reporter("text")->write(compiled, text, {}).ok());
  // Its optimizer runs fused too (AdamW(fused=True)), its model in bf16.
  EXPECT_EQ(compiled.already_on, (std::vector<std::string>{"fused-optimizer", "torch-compile", "autocast-bf16"}));
  EXPECT_NE(text.str().find("already in place (the trace shows it, so it is not advised): fused-optimizer, "
                            "torch-compile,"),
            std::string::npos)
      << text.str();
  const auto eager = analyze(pairs + "trace.json.gz");
  EXPECT_TRUE(has_what_if(eager, "torch-compile"));
  EXPECT_EQ(eager.already_on, (std::vector<std::string>{"fused-optimizer", "autocast-bf16"}));
  // healthy_bf16 runs AdamW(fused=True) under bf16 autocast: said, not advised.
  const auto fused = analyze(kDir + "healthy_bf16.json.gz");
  EXPECT_EQ(fused.already_on, (std::vector<std::string>{"fused-optimizer", "autocast-bf16"}));
}

// Mixed precision and TF32 in place (issue 43): the pairs' after-fix traces, recorded on
// the H200 with the fix applied, list their fix; the traces before it do not, and keep
// the what-if that the fix measured.
TEST(AlreadyOn, MixedPrecisionAndTf32InPlaceAreSaidNotAdvised) {
  const std::string pairs = std::string(CHOKEPOINT_TEST_DATA) + "/pairs/";
  auto on = [](const report::Report& r, const std::string& id) {
    return std::find(r.already_on.begin(), r.already_on.end(), id) != r.already_on.end();
  };
  const auto bf16_before = analyze(pairs + "gpt_autocast/trace.json.gz");
  const auto bf16_after = analyze(pairs + "gpt_autocast/fixed.json.gz");
  EXPECT_FALSE(on(bf16_before, "autocast-bf16"));
  EXPECT_TRUE(has_what_if(bf16_before, "autocast-bf16"));
  EXPECT_TRUE(on(bf16_after, "autocast-bf16"));
  EXPECT_FALSE(has_what_if(bf16_after, "autocast-bf16"));
  EXPECT_FALSE(has_what_if(bf16_after, "tf32"));
  const auto tf32_before = analyze(pairs + "mlp_tf32/trace.json.gz");
  const auto tf32_after = analyze(pairs + "mlp_tf32/fixed.json.gz");
  EXPECT_FALSE(on(tf32_before, "tf32"));
  EXPECT_TRUE(has_what_if(tf32_before, "tf32"));
  EXPECT_TRUE(on(tf32_after, "tf32"));
  EXPECT_FALSE(has_what_if(tf32_after, "tf32"));
}

}  // namespace
}  // namespace chokepoint
