#include "machine/profile.h"

#include <gtest/gtest.h>

#include <cmath>

namespace chokepoint::machine {
namespace {

Profile sample() {
  Profile p;
  p.tool_version = "0.1.0";
  p.created_utc = "2025-01-01T00:00:00Z";
  p.mode = "full";
  p.cuda_driver = 13000;
  p.cuda_runtime = 13000;
  p.cublaslt = 130100;
  p.seconds = 31.5;
  p.host.hostname = "gpu-box";
  p.host.cpus = 16;
  p.host.virtual_machine = true;
  p.host.process_numa_nodes = {0};
  p.host.env = {"CUDA_VISIBLE_DEVICES=0"};
  GpuProfile g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  g.pci_bus_id = "0000:3b:00.0";
  g.cc_major = 9;
  g.cc_minor = 0;
  g.num_sms = 132;
  g.memory_bytes = 150754820096;
  g.free_memory_bytes = 150000000000;
  g.sm_clock_under_load_mhz = 1755.5;
  g.pcie_speed_under_load = "32.0 GT/s PCIe";
  g.pcie_width_under_load = "16";
  g.numa_node = 0;
  Measurement m;
  m.key = "h2d_pinned";
  m.unit = "GB/s";
  m.value = 53.1;
  m.samples = {53.0, 53.1, 53.2};
  m.note = "4 x 1024 MiB";
  m.clock_mhz = 1470;
  m.reference = 63.0;
  m.pct_of_reference = 84.3;
  m.par_pct = 75;
  m.verdict = "ok";
  g.results.push_back(m);
  Measurement w;
  w.key = "gemm_fp8";
  w.unit = "TFLOP/s";
  w.status = ResultStatus::kWaived;
  w.note = "cuBLASLt offers no fp8 algorithm";
  g.results.push_back(w);
  g.ridge_points.push_back({"bf16", 790, 4248, 186, 206});
  p.gpus.push_back(g);
  return p;
}

TEST(Profile, RoundTripKeepsEveryField) {
  const Profile p = sample();
  auto back = parse_profile(profile_to_json(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const Profile& q = back.value();
  EXPECT_EQ(q.schema, kProfileSchema);
  EXPECT_EQ(q.mode, "full");
  EXPECT_EQ(q.cublaslt, 130100);
  EXPECT_TRUE(q.host.virtual_machine);
  EXPECT_EQ(q.host.env, p.host.env);
  ASSERT_EQ(q.gpus.size(), 1u);
  const GpuProfile& g = q.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_EQ(g.cc_major, 9);
  EXPECT_EQ(g.num_sms, 132);
  EXPECT_EQ(g.memory_bytes, 150754820096);
  EXPECT_DOUBLE_EQ(*g.sm_clock_under_load_mhz, 1755.5);
  EXPECT_EQ(g.pcie_speed_under_load, "32.0 GT/s PCIe");
  ASSERT_EQ(g.results.size(), 2u);
  EXPECT_DOUBLE_EQ(*g.results[0].value, 53.1);
  EXPECT_EQ(g.results[0].samples.size(), 3u);
  EXPECT_DOUBLE_EQ(*g.results[0].clock_mhz, 1470);
  EXPECT_FALSE(g.results[1].clock_mhz.has_value());
  EXPECT_EQ(g.results[0].verdict, "ok");
  EXPECT_DOUBLE_EQ(*g.results[0].par_pct, 75);
  EXPECT_EQ(g.results[1].status, ResultStatus::kWaived);
  EXPECT_FALSE(g.results[1].value.has_value());
  ASSERT_EQ(g.ridge_points.size(), 1u);
  EXPECT_DOUBLE_EQ(*g.ridge_points[0].published_flop_per_byte, 206);
  // And the serialization is stable.
  EXPECT_EQ(profile_to_json(q), profile_to_json(p));
}

TEST(Profile, MissingValuesAreNullNotZero) {
  const std::string j = profile_to_json(sample());
  EXPECT_NE(j.find("\"value\": null"), std::string::npos);
}

TEST(Profile, OkWithoutValueBecomesFailed) {
  auto p = parse_profile(R"({"schema": "chokepoint.profile/1", "gpus": [{"name": "X", "results": [
      {"key": "h2d_pinned", "status": "ok"}]}]})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gpus[0].results[0].status, ResultStatus::kFailed);
  EXPECT_FALSE(p->gpus[0].ok_value("h2d_pinned").has_value());
}

TEST(Profile, RejectsOtherSchemasAndGarbage) {
  EXPECT_FALSE(parse_profile("not json").ok());
  EXPECT_FALSE(parse_profile("[1, 2]").ok());
  EXPECT_FALSE(parse_profile(R"({"schema": "chokepoint.report/1"})").ok());
  auto wrong_type = parse_profile(R"({"schema": "chokepoint.profile/1", "gpus": [{"sms": "many"}]})");
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("sms"), std::string::npos);
}

TEST(Profile, ModuleErrorDocumentParses) {
  auto p = parse_profile(R"({"schema": "chokepoint.profile/1", "error": "no usable GPU: no CUDA device"})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->error, "no usable GPU: no CUDA device");
  EXPECT_TRUE(p->gpus.empty());
}

TEST(Profile, FindAndOkValue) {
  Profile p = sample();
  const GpuProfile& g = p.gpus[0];
  EXPECT_NE(g.find("h2d_pinned"), nullptr);
  EXPECT_EQ(g.find("nope"), nullptr);
  EXPECT_DOUBLE_EQ(*g.ok_value("h2d_pinned"), 53.1);
  EXPECT_FALSE(g.ok_value("gemm_fp8").has_value());  // waived
}

}  // namespace
}  // namespace chokepoint::machine
