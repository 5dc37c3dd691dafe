#include "machine/ceilings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "machine/profile_store.h"

namespace chokepoint::machine {
namespace {

namespace fs = std::filesystem;

DeviceSpec h200() {
  DeviceSpec d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.num_sms = 132;
  return d;
}

Measurement ok(const char* key, double v) {
  Measurement m;
  m.key = key;
  m.value = v;
  return m;
}

GpuProfile measured_h200(double scale = 1.0) {
  GpuProfile g;
  g.name = "NVIDIA H200";
  g.num_sms = 132;
  g.results = {ok("h2d_pinned", 53.1 * scale),   ok("d2h_pinned", 55.3 * scale), ok("h2d_pageable", 6.5 * scale),
               ok("d2h_pageable", 10.9 * scale), ok("d2d_memcpy", 2124 * scale), ok("ffma_fp32", 60 * scale),
               ok("gemm_tf32", 400 * scale),     ok("gemm_bf16", 790 * scale),   ok("gemm_fp16", 800 * scale),
               ok("gemm_int8", 1200 * scale)};
  Measurement waived;
  waived.key = "gemm_fp8";
  waived.status = ResultStatus::kWaived;
  g.results.push_back(waived);
  return g;
}

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("chokepoint_ceilings_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

TEST(Ceilings, PublishedH200) {
  ScopedEnv off(kProfileEnvVar, "none");
  const Ceilings c = ceilings_for(h200());
  EXPECT_EQ(c.source, "published:H200 SXM");
  EXPECT_DOUBLE_EQ(*c.hbm_gbps, 4800);
  EXPECT_DOUBLE_EQ(*c.d2d_copy_gbps, 2400);
  EXPECT_DOUBLE_EQ(*c.bf16_tflops, 989);
  EXPECT_DOUBLE_EQ(*c.int8_tops, 1979);
  EXPECT_DOUBLE_EQ(*c.pcie_theoretical_gbps, 63);
  EXPECT_NEAR(*c.pcie_gbps, 53.55, 1e-9);
  EXPECT_EQ(c.num_sms, 132);
  EXPECT_TRUE(c.has_tf32);
}

TEST(Ceilings, UnknownGpuHasNoCeilings) {
  ScopedEnv off(kProfileEnvVar, "none");
  DeviceSpec d;
  d.name = "Mystery Accelerator";
  const Ceilings c = ceilings_for(d);
  EXPECT_EQ(c.source, "unknown");
  EXPECT_FALSE(c.hbm_gbps.has_value());
  EXPECT_FALSE(c.int8_tops.has_value());
}

TEST(Ceilings, ApplyProfileTakesMeasuredFigures) {
  Profile p;
  p.gpus.push_back(measured_h200());
  const Ceilings pub = published_ceilings_for(h200());
  const Ceilings c = apply_profile(pub, p, "NVIDIA H200", "/x/profile.json");
  EXPECT_EQ(c.source, "profile:/x/profile.json");
  EXPECT_EQ(c.gpu, "H200 SXM");
  EXPECT_DOUBLE_EQ(*c.pcie_gbps, 55.3);  // the faster pinned direction
  EXPECT_DOUBLE_EQ(*c.pageable_gbps, 10.9);
  EXPECT_DOUBLE_EQ(*c.d2d_copy_gbps, 2124);
  EXPECT_DOUBLE_EQ(*c.hbm_gbps, 4248);  // a copy moves each byte twice
  EXPECT_DOUBLE_EQ(*c.fp32_tflops, 60);
  EXPECT_DOUBLE_EQ(*c.tf32_tflops, 400);
  EXPECT_DOUBLE_EQ(*c.bf16_tflops, 790);  // bf16, not the fp16 figure
  EXPECT_DOUBLE_EQ(*c.int8_tops, 1200);
  EXPECT_DOUBLE_EQ(*c.fp8_tflops, 1979);  // waived in the profile: published kept
  EXPECT_DOUBLE_EQ(*c.pcie_theoretical_gbps, 63);
}

TEST(Ceilings, ApplyProfileMedianOverGpusOfThatModel) {
  Profile p;
  p.gpus.push_back(measured_h200(1.0));
  p.gpus.push_back(measured_h200(0.5));  // one slow GPU does not set the ceiling
  p.gpus.push_back(measured_h200(1.0));
  GpuProfile other;
  other.name = "NVIDIA A100-SXM4-80GB";
  other.results = {ok("gemm_bf16", 1.0)};
  p.gpus.push_back(other);
  const Ceilings c = apply_profile(published_ceilings_for(h200()), p, "nvidia h200 ", "p.json");
  EXPECT_DOUBLE_EQ(*c.bf16_tflops, 790);
}

TEST(Ceilings, ApplyProfileIgnoresOtherGpus) {
  Profile p;
  GpuProfile other = measured_h200();
  other.name = "NVIDIA H100 80GB HBM3";
  p.gpus.push_back(other);
  const Ceilings pub = published_ceilings_for(h200());
  const Ceilings c = apply_profile(pub, p, "NVIDIA H200", "p.json");
  EXPECT_EQ(c.source, pub.source);
  EXPECT_DOUBLE_EQ(*c.bf16_tflops, 989);
}

TEST(Ceilings, ProfileWithNothingMeasuredKeepsPublishedSource) {
  Profile p;
  GpuProfile g;
  g.name = "NVIDIA H200";
  p.gpus.push_back(g);
  EXPECT_EQ(apply_profile(published_ceilings_for(h200()), p, "NVIDIA H200", "p.json").source, "published:H200 SXM");
}

TEST(Ceilings, ProfileGivesCeilingsToAnUnpublishedGpu) {
  Profile p;
  GpuProfile g = measured_h200();
  g.name = "NVIDIA Future GPU";
  p.gpus.push_back(g);
  DeviceSpec d;
  d.name = "NVIDIA Future GPU";
  const Ceilings c = apply_profile(published_ceilings_for(d), p, d.name, "p.json");
  EXPECT_EQ(c.gpu, "NVIDIA Future GPU");
  EXPECT_EQ(c.num_sms, 132);
  EXPECT_DOUBLE_EQ(*c.bf16_tflops, 790);
  EXPECT_FALSE(c.fp8_tflops.has_value());  // neither measured nor published
}

TEST(Ceilings, CeilingsForPrefersTheSavedProfile) {
  TempDir dir;
  ScopedEnv xdg("XDG_CONFIG_HOME", dir.str());
  ScopedEnv env(kProfileEnvVar, std::nullopt);
  Profile p;
  p.gpus.push_back(measured_h200());
  const auto path = default_profile_path("NVIDIA H200");
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, dir.str() + "/chokepoint/profile-nvidia-h200.json");
  ASSERT_TRUE(save_profile(p, *path).ok());
  Ceilings c = ceilings_for(h200());
  EXPECT_EQ(c.source, "profile:" + *path);
  EXPECT_DOUBLE_EQ(*c.bf16_tflops, 790);
  {
    ScopedEnv off(kProfileEnvVar, "off");  // the switch for reproducible runs
    EXPECT_EQ(ceilings_for(h200()).source, "published:H200 SXM");
  }
  // Another model finds no profile of its own.
  DeviceSpec a100;
  a100.name = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(ceilings_for(a100).source, "published:A100 SXM 80GB");
}

TEST(Ceilings, EnvironmentNamesTheProfileFile) {
  TempDir dir;
  const std::string file = dir.str() + "/mine.json";
  Profile p;
  p.gpus.push_back(measured_h200());
  ASSERT_TRUE(save_profile(p, file).ok());
  ScopedEnv env(kProfileEnvVar, file);
  EXPECT_EQ(ceilings_for(h200()).source, "profile:" + file);
}

TEST(Ceilings, UnreadableProfileFallsBackToPublished) {
  TempDir dir;
  const std::string file = dir.str() + "/broken.json";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    std::fputs("{ not json", f);
    std::fclose(f);
  }
  ScopedEnv env(kProfileEnvVar, file);
  EXPECT_EQ(ceilings_for(h200()).source, "published:H200 SXM");
  ScopedEnv missing(kProfileEnvVar, dir.str() + "/absent.json");
  EXPECT_EQ(ceilings_for(h200()).source, "published:H200 SXM");
}

TEST(ProfileStore, Slug) {
  EXPECT_EQ(profile_slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(profile_slug("  NVIDIA A100-SXM4-80GB "), "nvidia-a100-sxm4-80gb");
  EXPECT_EQ(profile_slug("NVIDIA GeForce RTX 4090 (laptop)"), "nvidia-geforce-rtx-4090-laptop");
  EXPECT_EQ(profile_slug("--"), "");
}

TEST(ProfileStore, SameGpuName) {
  EXPECT_TRUE(same_gpu_name("NVIDIA H200", " nvidia h200"));
  EXPECT_FALSE(same_gpu_name("NVIDIA H200", "NVIDIA H200 NVL"));
  EXPECT_FALSE(same_gpu_name("", ""));
}

TEST(ProfileStore, HomeFallbackAndNoHome) {
  ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
  {
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(*default_profile_path("NVIDIA H200"), "/home/u/.config/chokepoint/profile-nvidia-h200.json");
  }
  ScopedEnv home("HOME", std::nullopt);
  EXPECT_FALSE(default_profile_path("NVIDIA H200").has_value());
}

}  // namespace
}  // namespace chokepoint::machine
