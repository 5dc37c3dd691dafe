#include "bench/bench_run.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "base/version.h"
#include "bench/host_facts.h"
#include "bench/judge.h"
#include "machine/profile_keys.h"
#include "machine/profile_store.h"

namespace chokepoint::bench {

namespace key = machine::profile_key;
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string options_json(const BenchOptions& o) {
  nlohmann::json j;
  j[key::kMode] = o.mode;
  if (!o.devices.empty()) j[key::kDevices] = o.devices;
  if (!o.only.empty()) j[key::kOnly] = o.only;
  return j.dump();
}

Result<machine::Profile> finish_profile(const std::string& raw_json, const char* host_root, CauseFinder causes) {
  auto parsed = machine::parse_profile(raw_json);
  if (!parsed.ok())
    return Status::Error("the GPU benchmark module returned an unreadable result: " + parsed.status().message());
  machine::Profile p = std::move(parsed).value();
  if (!p.error.empty()) return Status::Error(p.error);
  if (p.gpus.empty()) return Status::Error("no usable GPU: the benchmark module found none to run on");
  bool any_ran = false;
  for (const auto& g : p.gpus) any_ran = any_ran || g.error.empty();
  if (!any_ran) return Status::Error("no usable GPU: " + p.gpus.front().error);
  p.tool_version = CHOKEPOINT_VERSION;
  if (p.created_utc.empty()) p.created_utc = utc_now();
  if (host_root != nullptr) {
    const machine::HostInputs in = host_root[0] == '\0' ? machine::live_host_inputs()
                                                        : machine::fixture_host_inputs(host_root);
    p.host = collect_host_info(in);
    for (auto& g : p.gpus) fill_gpu_host_facts(g, in);
  }
  judge(p, causes);
  return p;
}

Result<machine::Profile> run_bench(const BenchModule& module, const BenchOptions& o, const ProgressFn& progress,
                                   CauseFinder causes) {
  int rc = 0;
  auto raw = module.run(options_json(o), progress, &rc);
  if (!raw.ok()) return raw.status();
  if (rc == 2) {
    // Bad options: the module's document says which.
    auto p = machine::parse_profile(raw.value());
    return Status::Error(p.ok() && !p->error.empty() ? p->error : "the benchmark module rejected the options");
  }
  return finish_profile(raw.value(), "", causes);
}

Result<std::vector<TestcaseInfo>> list_testcases(const BenchModule& module) {
  int rc = 0;
  auto raw = module.run(R"({"list": true})", {}, &rc);
  if (!raw.ok()) return raw.status();
  auto j = nlohmann::json::parse(raw.value(), nullptr, false);
  if (j.is_discarded() || !j.contains(key::kTestcases)) {
    return Status::Error("the GPU benchmark module returned no testcase list");
  }
  std::vector<TestcaseInfo> out;
  for (const auto& t : j[key::kTestcases]) {
    TestcaseInfo i;
    i.key = t.value("key", "");
    i.description = t.value("description", "");
    i.unit = t.value("unit", "");
    i.selftest = t.value(key::kSelftest, false);
    out.push_back(std::move(i));
  }
  return out;
}

std::vector<std::pair<std::string, machine::Profile>> split_by_gpu_name(const machine::Profile& p) {
  std::vector<std::pair<std::string, machine::Profile>> out;
  for (const auto& g : p.gpus) {
    if (!g.error.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const auto& e) { return machine::same_gpu_name(e.first, g.name); });
    if (it == out.end()) {
      machine::Profile copy = p;
      copy.gpus.clear();
      out.emplace_back(g.name, std::move(copy));
      it = out.end() - 1;
    }
    it->second.gpus.push_back(g);
  }
  return out;
}

bool any_selftest_failed(const machine::Profile& p) {
  for (const auto& g : p.gpus) {
    for (const auto& m : g.results) {
      if (m.key.rfind("selftest_", 0) == 0 && m.status == machine::ResultStatus::kFailed) return true;
    }
  }
  return false;
}

Result<std::vector<std::string>> save_profiles(const machine::Profile& p) {
  const char* env = std::getenv(machine::kProfileEnvVar);
  const bool env_file = env != nullptr && env[0] != '\0' && !machine::profiles_disabled();
  std::vector<std::pair<std::string, machine::Profile>> parts;
  if (env_file) {
    parts.emplace_back(env, p);
  } else {
    for (auto& [name, part] : split_by_gpu_name(p)) {
      auto path = machine::default_profile_path(name);
      if (!path) return Status::Error(ErrorCode::kFailed, "cannot save: neither XDG_CONFIG_HOME nor HOME is set");
      parts.emplace_back(*path, std::move(part));
    }
  }
  std::vector<std::string> saved;
  for (const auto& [path, part] : parts) {
    if (Status s = machine::save_profile(part, path); !s.ok()) return s;
    saved.push_back(path);
  }
  return saved;
}

}  // namespace chokepoint::bench
