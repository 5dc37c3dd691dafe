// Scenario file of the fake NVML: "key = value" lines, '#' comments. Global keys
// (driver_version, device_count, init_error ...) and per-device keys "gpuN.key".
// A value "!N" makes the call return NVML code N; a missing key returns
// NVML_ERROR_NOT_SUPPORTED (3), the code a real driver gives for absent features.
// See scenarios/*.txt for every key.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace fake_nvml {

inline constexpr int kNotSupported = 3;

class Config {
 public:
  bool load(const char* path) {
    kv_.clear();
    if (path == nullptr || path[0] == '\0') return false;
    std::ifstream in(path);
    if (!in) return false;
    std::string line;
    while (std::getline(in, line)) {
      const auto hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      const auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = trim(line.substr(0, eq));
      if (!key.empty()) kv_[key] = trim(line.substr(eq + 1));
    }
    return true;
  }

  // 0 and the text when the key is set to a value; the NVML code to return otherwise.
  int text(const std::string& key, std::string* out) const {
    const auto it = kv_.find(key);
    if (it == kv_.end()) return kNotSupported;
    if (!it->second.empty() && it->second[0] == '!') return std::atoi(it->second.c_str() + 1);
    *out = it->second;
    return 0;
  }

  // Integers accept 0x.. and a binary suffix: 80GiB, 512MiB, 64KiB.
  template <typename T>
  int number(const std::string& key, T* out) const {
    std::string s;
    if (int rc = text(key, &s); rc != 0) return rc;
    *out = static_cast<T>(parse_number(s));
    return 0;
  }

  static unsigned long long parse_number(const std::string& s) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 0);
    const std::string suffix = trim(end != nullptr ? std::string(end) : std::string());
    if (suffix == "KiB") v <<= 10;
    if (suffix == "MiB") v <<= 20;
    if (suffix == "GiB") v <<= 30;
    if (suffix == "TiB") v <<= 40;
    return v;
  }

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
  }

 private:
  std::map<std::string, std::string> kv_;
};

}  // namespace fake_nvml
