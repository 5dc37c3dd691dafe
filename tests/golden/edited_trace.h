// Edited copies of the real Kineto fixtures (tests/data/kineto, recorded on the H200):
// the same events with another GPU's "deviceProperties" (name, SM count, memory and
// compute capability as CUDA reports them), for what must follow the device.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace chokepoint::testing {

// The copies made by this process, removed when it exits (each is a whole fixture: a
// test run left ~700 MB of them in the temporary directory).
class ScratchFiles {
 public:
  static std::string keep(const std::string& path) {
    static ScratchFiles files;
    files.paths_.push_back(path);
    return path;
  }
  ScratchFiles(const ScratchFiles&) = delete;
  ScratchFiles& operator=(const ScratchFiles&) = delete;

 private:
  ScratchFiles() = default;
  ~ScratchFiles() {
    for (const auto& p : paths_) std::remove(p.c_str());
  }
  std::vector<std::string> paths_;
};

struct DeviceProps {
  const char* name;
  int sms;
  int64_t memory_bytes;
  int cc_major, cc_minor;
};

// The fixture `path` (.json.gz) parsed, through a scratch file `base`.src.json removed
// after; false when it cannot be read.
inline bool load_fixture(const std::string& path, const std::string& base, nlohmann::json* j) {
  const std::string plain = base + ".src.json";
  if (std::system(("gzip -dc " + path + " > " + plain).c_str()) != 0) return false;
  {
    std::ifstream in(plain);
    *j = nlohmann::json::parse(in);
  }
  std::remove(plain.c_str());
  return true;
}

// The fixture (a .json.gz under `dir`) with every device's properties replaced, written
// to a file of its own under the test's temporary directory; "" when it cannot be read.
inline std::string edited_copy(const std::string& dir, const std::string& fixture, const DeviceProps& d) {
  static int counter = 0;
  const std::string base = ::testing::TempDir() + "/edited_" + std::to_string(getpid()) + "_" +
                           std::to_string(counter++);
  nlohmann::json j;
  if (!load_fixture(dir + fixture, base, &j)) return "";
  for (auto& p : j.at("deviceProperties")) {
    p["name"] = d.name;
    p["numSms"] = d.sms;
    p["totalGlobalMem"] = d.memory_bytes;
    p["computeMajor"] = d.cc_major;
    p["computeMinor"] = d.cc_minor;
  }
  const std::string out = ScratchFiles::keep(base + ".json");
  std::ofstream(out) << j.dump();
  return out;
}

// The fixture without a GPU: no deviceProperties and none of its GPU events (kernels,
// copies, sets, GPU annotations, the CPU-to-GPU flows), as a CPU-only profile records it.
inline std::string cpu_only_copy(const std::string& dir, const std::string& fixture) {
  static int counter = 0;
  const std::string base = ::testing::TempDir() + "/cpu_only_" + std::to_string(getpid()) + "_" +
                           std::to_string(counter++);
  nlohmann::json j;
  if (!load_fixture(dir + fixture, base, &j)) return "";
  j["deviceProperties"] = nlohmann::json::array();
  nlohmann::json kept = nlohmann::json::array();
  for (auto& e : j.at("traceEvents")) {
    const std::string cat = e.value("cat", "");
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "gpu_user_annotation" ||
        cat == "ac2g") {
      continue;
    }
    kept.push_back(std::move(e));
  }
  j["traceEvents"] = std::move(kept);
  const std::string out = ScratchFiles::keep(base + ".json");
  std::ofstream(out) << j.dump();
  return out;
}

}  // namespace chokepoint::testing
