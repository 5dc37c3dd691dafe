#include "pipeline/inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace chokepoint::pipeline {
namespace {

namespace fs = std::filesystem;

// meta.json is input like any other: the bursts it lists are read only from files inside
// the recording, each once, at a rate py-spy can have sampled at.
TEST(LoadRecording, BurstsListedInMetaJsonAreCheckedBeforeReading) {
  const fs::path src = fs::path(CHOKEPOINT_TEST_DATA) / "programs/recorded/gpt.run/rec";
  const fs::path dir = fs::path(::testing::TempDir()) / ("bursts_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(src)) fs::copy_file(e.path(), dir / e.path().filename());
  // Two more readable stack files, listed with rates no py-spy samples at.
  fs::copy_file(dir / "pyspy.json.gz", dir / "pyspy-burst-2.json.gz");
  fs::copy_file(dir / "pyspy.json.gz", dir / "pyspy-burst-3.json.gz");
  nlohmann::json meta;
  {
    std::ifstream in(dir / "meta.json");
    meta = nlohmann::json::parse(in);
  }
  const auto origin = meta["stacks"]["origin_ns"];
  meta["stacks"]["bursts"] = {
      {{"file", "pyspy.json"}, {"origin_ns", origin}, {"rate_hz", 500}},
      {{"file", "pyspy.json"}, {"origin_ns", origin}, {"rate_hz", 500}},            // the same again
      {{"file", "../rec/pyspy.json"}, {"origin_ns", origin}, {"rate_hz", 500}},     // outside
      {{"file", "pyspy-burst-2.json"}, {"origin_ns", origin}, {"rate_hz", -5}},     // no such rate
      {{"file", "pyspy-burst-3.json"}, {"origin_ns", origin}, {"rate_hz", 1e300}},  // nor this
      {{"file", "pyspy-burst-4.json"}, {"origin_ns", origin}, {"rate_hz", 500}},    // no such file
  };
  std::ofstream(dir / "meta.json") << meta.dump();
  auto in = load_recording(dir.string());
  ASSERT_TRUE(in.ok()) << in.status().message();
  ASSERT_EQ(in->stack_bursts.size(), 1u);
  EXPECT_EQ(in->stack_bursts[0].rate_hz, 500);
  EXPECT_FALSE(in->stack_bursts[0].empty());
  ASSERT_TRUE(in->stacks.has_value());
  EXPECT_EQ(in->stacks->rate_hz, meta["stacks"]["rate_hz"].get<double>());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace chokepoint::pipeline
