#include "machine/profile_store.h"

#include "base/read_file.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/safe_write.h"
#include "base/text.h"

namespace chokepoint::machine {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

}  // namespace

std::string profile_slug(std::string_view gpu_name) {
  std::string out;
  bool dash = false;
  for (char ch : gpu_name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      if (dash && !out.empty()) out.push_back('-');
      out.push_back(static_cast<char>(std::tolower(c)));
      dash = false;
    } else {
      dash = true;
    }
  }
  return out;
}

std::optional<std::string> profile_dir() {
  if (const char* xdg = env("XDG_CONFIG_HOME")) return std::string(xdg) + "/chokepoint";
  if (const char* home = env("HOME")) return std::string(home) + "/.config/chokepoint";
  return std::nullopt;
}

std::optional<std::string> default_profile_path(std::string_view gpu_name) {
  auto dir = profile_dir();
  const std::string slug = profile_slug(gpu_name);
  if (!dir || slug.empty()) return std::nullopt;
  return *dir + "/profile-" + slug + ".json";
}

bool profiles_disabled() {
  const char* v = env(kProfileEnvVar);
  if (v == nullptr) return false;
  const std::string s(v);
  return s == "none" || s == "off" || s == "0";
}

std::optional<std::string> profile_path_for(std::string_view gpu_name) {
  if (profiles_disabled()) return std::nullopt;
  if (const char* v = env(kProfileEnvVar)) return std::string(v);
  auto path = default_profile_path(gpu_name);
  std::error_code ec;
  if (!path || !std::filesystem::is_regular_file(*path, ec)) return std::nullopt;
  return path;
}

Result<Profile> load_profile(const std::string& path) {
  // A ceilings file is small; a FIFO or device named by --ceilings must not hang the run.
  const Result<std::string> text = read_regular_file(path, 16u << 20);
  if (!text.ok()) return Status::Error("cannot read profile: " + text.status().message());
  auto p = parse_profile(text.value());
  if (!p.ok()) return Status::Error(path + ": " + p.status().message());
  return p;
}

Status save_profile(const Profile& p, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  return write_file_safely(path, profile_to_json(p));
}

bool same_gpu_name(std::string_view a, std::string_view b) {
  a = trim(a);
  b = trim(b);
  if (a.size() != b.size() || a.empty()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace chokepoint::machine
