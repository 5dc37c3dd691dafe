// `chokepoint bench` as a library: options -> module call -> profile -> host facts ->
// judgement. Everything after the module call is pure and tested on canned JSON.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "bench/judge.h"
#include "bench/module_loader.h"
#include "machine/profile.h"

namespace chokepoint::bench {

struct BenchOptions {
  std::string mode = "full";      // "full" | "quick" | "selftest"
  std::vector<int> devices;       // empty: every visible GPU
  std::vector<std::string> only;  // empty: every testcase of the mode
};

std::string options_json(const BenchOptions& o);

// Runs the benchmarks through the module and judges them, the causes of results below par
// from `causes` (the engine's rules::bench_causes). An error when the module could not run
// on any GPU ("no usable GPU: ..."), with the module's reason.
Result<machine::Profile> run_bench(const BenchModule& module, const BenchOptions& o, const ProgressFn& progress,
                                   CauseFinder causes);

// The part of run_bench after the module call: parses the raw JSON, adds host facts
// (read under host_root, "" = this machine; nullptr host_root skips them), judges.
Result<machine::Profile> finish_profile(const std::string& raw_json, const char* host_root, CauseFinder causes);

struct TestcaseInfo {
  std::string key, description, unit;
  bool selftest = false;
};

// The module's testcase registry (no GPU needed).
Result<std::vector<TestcaseInfo>> list_testcases(const BenchModule& module);

// One profile per GPU model (each holding only that model's GPUs), for --save.
std::vector<std::pair<std::string, machine::Profile>> split_by_gpu_name(const machine::Profile& p);

// `bench --save`: one profile file per GPU model, where analyze and run look them up
// (machine/profile_store.h), or the one file $CHOKEPOINT_PROFILE names (the lookup is
// redirected there, so the save goes there too). Returns the paths written.
Result<std::vector<std::string>> save_profiles(const machine::Profile& p);

// True when a selftest result failed (the --selftest exit status).
bool any_selftest_failed(const machine::Profile& p);

}  // namespace chokepoint::bench
