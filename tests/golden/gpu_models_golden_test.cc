// Golden tests for GPUs other than the H200 the fixtures were recorded on: each case is
// an edited copy of a real H200 trace (tests/data/kineto/fp32_gemm.json.gz) whose
// "deviceProperties" carry another GPU's name, SM count, memory and compute capability
// as CUDA reports them. The kernels stay the H200's; what must follow the device is the
// matched published GPU (machine/gpu_table.cc), the ceilings the analyses divide by,
// and the estimates that rescale by those ceilings.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "edited_trace.h"
#include "pipeline/analyze_pipeline.h"
#include "published_ceilings.h"

namespace chokepoint {
namespace {

const std::string kDir = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/";
constexpr int64_t kGiB = 1024LL * 1024 * 1024;

struct Device {
  const char* name;  // as CUDA names it
  int sms;
  double memory_gib;
  int cc_major, cc_minor;
  // What must come out: the published row (docs/FORMATS.md "Published ceilings").
  const char* gpu;
  double fp32, tensor, hbm_gbps;  // tensor: TF32 from compute 8.0 on, else FP16
};

// Memory sizes are what CUDA reports (the datasheet's less what the driver keeps).
const Device kDevices[] = {
    {"Tesla V100-SXM2-32GB", 80, 31.7, 7, 0, "V100 SXM2", 15.7, 125, 900},
    {"Tesla T4", 40, 14.6, 7, 5, "T4", 8.1, 65, 320},
    {"NVIDIA A100-SXM4-40GB", 108, 39.4, 8, 0, "A100 SXM 40GB", 19.5, 156, 1555},
    {"NVIDIA A100 80GB PCIe", 108, 79.2, 8, 0, "A100 PCIe 80GB", 19.5, 156, 1935},
    {"NVIDIA A10G", 80, 22.1, 8, 6, "A10G", 31.52, 35, 600},
    {"NVIDIA L4", 58, 22.0, 8, 9, "L4", 30.3, 60, 300},
    {"NVIDIA L40S", 142, 44.4, 8, 9, "L40S", 91.6, 183, 864},
    {"NVIDIA H100 PCIe", 114, 79.2, 9, 0, "H100 PCIe", 51, 378, 2000},
    {"NVIDIA H100 NVL", 132, 93.1, 9, 0, "H100 NVL", 60, 418, 3900},
    {"NVIDIA H20", 78, 95.0, 9, 0, "H20", 44, 74, 4000},
    {"NVIDIA B200", 148, 178.4, 10, 0, "B200", 75, 1125, 8000},
    {"NVIDIA GeForce RTX 4090", 128, 23.6, 8, 9, "RTX 4090", 82.6, 82.6, 1008},
    {"NVIDIA RTX 6000 Ada Generation", 142, 47.5, 8, 9, "RTX 6000 Ada", 91.1, 182.1, 960},
    {"Orin", 16, 61.4, 8, 7, "Jetson AGX Orin 64GB", 5.3, 21.3, 204.8},
    {"NVIDIA H200", 132, 139.8, 9, 0, "H200 SXM", 67, 495, 4800},  // unedited: the recording GPU
};

std::string edited_copy(const std::string& fixture, const char* name, int sms, int64_t memory, int major, int minor) {
  return testing::edited_copy(kDir, fixture, {name, sms, memory, major, minor});
}

report::Report analyze(const std::string& path) {
  auto r = chokepoint::golden::analyze_fixture({path});
  std::remove(path.c_str());
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : report::Report{};
}

const rules::Finding* finding(const report::Report& r, const std::string& id) {
  for (const auto& f : r.findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

const rules::RemedyAdvice* what_if(const report::Report& r, const std::string& id) {
  for (const auto& w : r.what_ifs) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

double evidence(const rules::Finding& f, const std::string& metric) {
  for (const auto& e : f.evidence) {
    if (e.metric == metric) return e.value;
  }
  ADD_FAILURE() << "no evidence " << metric << " in " << f.id;
  return -1;
}

class GpuModels : public ::testing::TestWithParam<Device> {};

// The matched GPU and its ceilings in the report, and the no-tensor-cores finding's
// peaks (the FP32 SIMT GEMMs of the trace against this GPU's tensor-core rate).
TEST_P(GpuModels, CeilingsAndFindingFollowTheDevice) {
  const Device& d = GetParam();
  const auto rep = analyze(edited_copy("fp32_gemm.json.gz", d.name, d.sms,
                                       static_cast<int64_t>(d.memory_gib * static_cast<double>(kGiB)), d.cc_major,
                                       d.cc_minor));
  ASSERT_FALSE(rep.devices.empty());
  const auto& c = rep.devices[0].ceilings;
  EXPECT_EQ(rep.devices[0].name, d.name);
  EXPECT_EQ(c.gpu, d.gpu);
  EXPECT_EQ(c.source, std::string("published:") + d.gpu);
  EXPECT_TRUE(c.note.empty()) << c.note;  // a whole GPU, named unambiguously
  ASSERT_TRUE(c.fp32_tflops && c.hbm_gbps);
  EXPECT_DOUBLE_EQ(*c.fp32_tflops, d.fp32);
  EXPECT_DOUBLE_EQ(*c.hbm_gbps, d.hbm_gbps);
  EXPECT_TRUE(c.missing_hint.empty()) << c.missing_hint;

  const rules::Finding* f = finding(rep, "no-tensor-cores");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(evidence(*f, "fp32_peak_tflops"), d.fp32);
  EXPECT_DOUBLE_EQ(evidence(*f, "tensor_core_peak_tflops"), d.tensor);
}

INSTANTIATE_TEST_SUITE_P(Devices, GpuModels, ::testing::ValuesIn(kDevices), [](const auto& info) {
  std::string s = info.param.gpu;
  std::replace_if(
      s.begin(), s.end(), [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); }, '_');
  return s;
});

// The TF32 what-if rescales the FP32 GEMMs by the GPU's TF32 GEMM rate (its published
// peak times the share bench measured on the H200): it names that rate, and a faster
// TF32 part gets a larger gain from the same trace.
TEST(GpuModelsWhatIf, Tf32EstimateRescalesByTheDevicesCeiling) {
  std::map<std::string, double> speedup;
  for (const Device& d : kDevices) {
    if (d.cc_major < 8) continue;  // no TF32 before Ampere
    const auto rep = analyze(edited_copy("fp32_gemm.json.gz", d.name, d.sms,
                                         static_cast<int64_t>(d.memory_gib * static_cast<double>(kGiB)), d.cc_major,
                                         d.cc_minor));
    const rules::RemedyAdvice* w = what_if(rep, "tf32");
    if (w == nullptr || !w->estimated_speedup) continue;  // no gain on this GPU
    speedup[d.gpu] = *w->estimated_speedup;
    bool names_rate = false;
    for (const auto& a : w->assumptions) names_rate |= a.find(std::string("published:") + d.gpu) != std::string::npos;
    EXPECT_TRUE(names_rate) << d.gpu;
  }
  ASSERT_TRUE(speedup.count("H200 SXM") && speedup.count("H100 PCIe") && speedup.count("A100 SXM 40GB"));
  EXPECT_GT(speedup["H200 SXM"], speedup["H100 PCIe"]);       // 495 vs 378 TF32 TFLOP/s
  EXPECT_GT(speedup["H100 PCIe"], speedup["A100 SXM 40GB"]);  // 378 vs 156
  EXPECT_GE(speedup["B200"], speedup["H200 SXM"]);            // 1125 vs 495, bounded by HBM time
  // The RTX 4090's TF32 rate is its FP32 rate (82.6): the gain left is the H200's FP32
  // kernels (recorded in this trace) against the 4090's GEMM rate, below the A100's.
  ASSERT_TRUE(speedup.count("RTX 4090"));
  EXPECT_GT(speedup["A100 SXM 40GB"], speedup["RTX 4090"]);
  for (const auto& [gpu, s] : speedup) std::printf("tf32 what-if on %s: %.3fx\n", gpu.c_str(), s);
}

// A MIG slice of an H100: the ceilings scaled to the slice, and the report says so.
TEST(GpuModelsMig, SliceCeilingsScaledAndSaid) {
  const auto rep = analyze(
      edited_copy("fp32_gemm.json.gz", "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 60, 40 * kGiB - 600000000, 9, 0));
  ASSERT_FALSE(rep.devices.empty());
  const auto& c = rep.devices[0].ceilings;
  EXPECT_EQ(c.gpu, "H100 SXM MIG 3g.40gb");
  ASSERT_TRUE(c.fp32_tflops && c.tf32_tflops && c.hbm_gbps && c.l2_mb);
  EXPECT_DOUBLE_EQ(*c.fp32_tflops, 67.0 * 60 / 132);
  EXPECT_DOUBLE_EQ(*c.tf32_tflops, 495.0 * 60 / 132);
  EXPECT_DOUBLE_EQ(*c.hbm_gbps, 3350.0 * 40 / 80);
  EXPECT_DOUBLE_EQ(*c.l2_mb, 25);
  EXPECT_NE(c.note.find("MIG slice 3g.40gb of an H100 SXM"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("60 of 132 SMs"), std::string::npos) << c.note;
  const rules::Finding* f = finding(rep, "no-tensor-cores");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(evidence(*f, "tensor_core_peak_tflops"), 495.0 * 60 / 132);
}

// A GPU not in the table: no figure is made up, and the report says which are missing
// and how to supply them instead of "?".
TEST(GpuModelsUnknown, MissingFiguresNamedWithTheRemedy) {
  const auto rep = analyze(edited_copy("fp32_gemm.json.gz", "NVIDIA Future GPU", 200, 300 * kGiB, 12, 0));
  ASSERT_FALSE(rep.devices.empty());
  const auto& c = rep.devices[0].ceilings;
  EXPECT_EQ(c.source, "unknown");
  EXPECT_FALSE(c.fp32_tflops.has_value());
  EXPECT_EQ(c.missing, (std::vector<std::string>{"memory bandwidth", "host link bandwidth", "FP32 TFLOP/s",
                                                 "TF32 TFLOP/s", "BF16 TFLOP/s"}));
  EXPECT_NE(c.missing_hint.find("no memory bandwidth, host link bandwidth, FP32 TFLOP/s, TF32 TFLOP/s and BF16 "
                                "TFLOP/s ceilings for \"NVIDIA Future GPU\" (not in the published table)"),
            std::string::npos)
      << c.missing_hint;
  EXPECT_NE(c.missing_hint.find("chokepoint bench --save"), std::string::npos);
  EXPECT_NE(c.missing_hint.find("--ceilings FILE"), std::string::npos);
  const rules::Finding* f = finding(rep, "no-tensor-cores");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->detail.find('?'), std::string::npos) << f->detail;
  EXPECT_NE(f->detail.find("no FP32 TFLOP/s ceiling for \"NVIDIA Future GPU\""), std::string::npos) << f->detail;
}

}  // namespace
}  // namespace chokepoint
