// End-to-end tests of `chokepoint diff` as a user runs it: the formats, a JSON report as
// one side, the --fail-if-slower gate (exit status 3) and the errors on bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

const std::string kExe = CHOKEPOINT_BINARY;
const std::string kPair = std::string(CHOKEPOINT_TEST_DATA) + "/pairs/mlp_tf32/";
// mlp_tf32 on the H200: FP32 matmuls (broken) against TF32 tensor cores (fixed).
const std::string kBroken = kPair + "trace.json.gz";
const std::string kFixed = kPair + "fixed.json.gz";

struct Output {
  int rc = -1;
  std::string out, err;
};

std::string dir() {
  const std::string d = ::testing::TempDir() + "/diff_cli_" + std::to_string(getpid());
  std::filesystem::create_directories(d);
  return d;
}

// `env` (assignments, each followed by a space) after the defaults, so they can undo them.
Output run_env(const std::string& env, const std::string& args) {
  const std::string so = dir() + "/stdout", se = dir() + "/stderr";
  const std::string cmd = "CHOKEPOINT_PROFILE=none NO_COLOR=1 " + env + kExe + " " + args + " >" + so + " 2>" + se;
  const int status = std::system(cmd.c_str());
  Output o;
  o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(so), err(se);
  o.out.assign(std::istreambuf_iterator<char>(out), {});
  o.err.assign(std::istreambuf_iterator<char>(err), {});
  return o;
}

Output run(const std::string& args) { return run_env("", args); }

TEST(DiffCli, TextShowsTheChangeFindingsAndPromise) {
  const Output o = run("diff " + kBroken + " " + kFixed);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("faster"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Mann-Whitney"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("resolved  no-tensor-cores"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Promise check"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("before predicted"), std::string::npos) << o.out;
}

TEST(DiffCli, JsonReportAsBeforeGivesTheSameDiff) {
  const std::string report = dir() + "/before.json";
  ASSERT_EQ(run("analyze --format json -q -o " + report + " " + kBroken).rc, 0);
  const Output from_traces = run("diff --format json " + kBroken + " " + kFixed);
  const Output from_report = run("diff --format json " + report + " " + kFixed);
  ASSERT_EQ(from_traces.rc, 0) << from_traces.err;
  ASSERT_EQ(from_report.rc, 0) << from_report.err;
  const auto a = nlohmann::json::parse(from_traces.out);
  const auto b = nlohmann::json::parse(from_report.out);
  EXPECT_EQ(a.at("schema"), "chokepoint.diff/1");
  EXPECT_EQ(b.at("before").at("kind"), "report");
  EXPECT_EQ(a.at("before").at("kind"), "trace");
  EXPECT_NEAR(b.at("step").at("speedup").get<double>(), a.at("step").at("speedup").get<double>(), 1e-3);
  EXPECT_EQ(b.at("step").at("p_value"), a.at("step").at("p_value"));
  EXPECT_EQ(b.at("findings"), a.at("findings"));
  EXPECT_EQ(b.at("promises").size(), a.at("promises").size());
}

TEST(DiffCli, MarkdownForAPullRequest) {
  const Output o = run("diff --format md " + kBroken + " " + kFixed);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.out.rfind("## chokepoint diff: ", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("| step p50 (as profiled) |"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("**Promise check**"), std::string::npos);
}

// The gate: swapping the sides makes AFTER the slow FP32 run.
TEST(DiffCli, FailIfSlowerExitsThree) {
  const Output slower = run("diff --fail-if-slower 5% " + kFixed + " " + kBroken);
  EXPECT_EQ(slower.rc, 3) << slower.err;
  EXPECT_NE(slower.err.find("slower (more than 5%, --fail-if-slower"), std::string::npos) << slower.err;
  EXPECT_NE(slower.out.find("slower"), std::string::npos);  // the diff is written first
  EXPECT_EQ(run("diff --fail-if-slower 5% " + kBroken + " " + kFixed).rc, 0);
  EXPECT_EQ(run("diff --fail-if-slower 5 " + kBroken + " " + kBroken).rc, 0);  // the same run: 0% slower
}

// A recording of `run` without a trace has no steps: the diff says so, and the gate
// cannot judge (exit 1), while the findings still compare.
TEST(DiffCli, LiveRecordingHasNoStepTime) {
  const std::string rec = kPair + "run.rec";
  const Output o = run("diff " + rec + " " + kFixed);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("(recording)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("no step time to compare"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("before: no steps"), std::string::npos) << o.out;
  const Output gate = run("diff --fail-if-slower 5% " + rec + " " + kFixed);
  EXPECT_EQ(gate.rc, 1);
  EXPECT_NE(gate.err.find("a side has no step time"), std::string::npos) << gate.err;
}

// Issue 45: several runs a side (BEFORE... -- AFTER...), runs as the unit of the noise.
// decode_graphs profiled three times on the H200 (rounds A, C and D) against its fix.
TEST(DiffCli, SeveralRunsASide) {
  const std::string d = std::string(CHOKEPOINT_TEST_DATA) + "/pairs/decode_graphs/";
  const std::string fixed = d + "fixed.json.gz";
  const Output o = run("diff -f json " + d + "trace.json.gz " + d + "rerun.json.gz " + d + "round_d.json.gz -- " +
                       fixed + " " + fixed);
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  const auto& step = j.at("step");
  EXPECT_EQ(step.at("noise_method"), "runs");
  EXPECT_EQ(step.at("runs_before").size(), 3u);
  EXPECT_EQ(step.at("runs_after").size(), 2u);
  EXPECT_LT(step.at("p_value").get<double>(), 0.05);
  EXPECT_FALSE(step.at("within_noise").get<bool>());
  // The headline is the ratio of the runs' geometric means, each without the profiler's cost.
  double log_b = 0;
  for (const auto& r : step.at("runs_before")) log_b += std::log(r.at("step_ms").get<double>());
  const double b = std::exp(log_b / 3), a = step.at("runs_after")[0].at("step_ms").get<double>();
  EXPECT_NEAR(step.at("headline").at("speedup").get<double>(), b / a, 0.01 * b / a);
  EXPECT_EQ(step.at("headline").at("source"), "corrected");
  // Without "--", more than two runs is a usage error; "--" with nothing after it too.
  EXPECT_EQ(run("diff " + d + "trace.json.gz " + d + "rerun.json.gz " + fixed).rc, 2);
  EXPECT_EQ(run("diff " + d + "trace.json.gz --").rc, 2);
}

// `diff --aa`: the A/A spread of this machine, kept beside the machine profiles, is the
// noise floor of later diffs with one run a side.
TEST(DiffCli, AaRecordBecomesTheNoiseFloor) {
  const std::string d = std::string(CHOKEPOINT_TEST_DATA) + "/pairs/decode_graphs/";
  const std::string cfg = dir() + "/config";
  std::filesystem::remove_all(cfg);
  const std::string env = "CHOKEPOINT_PROFILE= XDG_CONFIG_HOME=" + cfg + " ";
  const Output aa = run_env(env, "diff --aa " + d + "trace.json.gz " + d + "rerun.json.gz");
  ASSERT_EQ(aa.rc, 0) << aa.err;
  EXPECT_NE(aa.out.find("A/A: 2 runs of one program on NVIDIA H200"), std::string::npos) << aa.out;
  const std::string saved = cfg + "/chokepoint/aa-nvidia-h200.json";
  ASSERT_TRUE(std::filesystem::exists(saved)) << aa.out;
  const auto rec = nlohmann::json::parse(std::ifstream(saved));
  EXPECT_EQ(rec.at("schema"), "chokepoint.aa/1");
  ASSERT_EQ(rec.at("records").size(), 1u);
  const double spread = rec.at("records")[0].at("spread").get<double>();
  EXPECT_GT(spread, 1.1);  // 5.73 against 4.66 ms a step: the host moved between the processes
  const Output o = run_env(env, "diff -f json " + d + "trace.json.gz " + d + "fixed.json.gz");
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j.at("step").at("noise_method"), "noise-floor");
  EXPECT_NEAR(j.at("step").at("noise_floor").get<double>(), spread, 1e-3);
  EXPECT_NE(j.at("step").at("noise_floor_source").get<std::string>().find("A/A record"), std::string::npos);
  // Runs of other programs are refused.
  const Output mixed = run_env(env, "diff --aa " + d + "trace.json.gz " + kBroken);
  EXPECT_EQ(mixed.rc, 1);
  EXPECT_NE(mixed.err.find("runs of one program"), std::string::npos) << mixed.err;
  EXPECT_EQ(run_env(env, "diff --aa " + d + "trace.json.gz").rc, 2);  // one run
}

// Issue 45: the text fits the terminal (COLUMNS), and the share tables print no more
// digits than the step's size needs.
TEST(DiffCli, TextFitsTheTerminal) {
  const Output o = run_env("COLUMNS=72 ", "diff " + kBroken + " " + kFixed);
  ASSERT_EQ(o.rc, 0) << o.err;
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) {
    // One word longer than the line (a path) may stand alone; nothing else passes 72.
    if (line.find(' ', line.find_first_not_of(' ')) == std::string::npos) continue;
    EXPECT_LE(line.size(), 72u) << line;
  }
  EXPECT_EQ(o.out.find("0.000"), std::string::npos) << o.out;
}

TEST(DiffCli, BadInput) {
  EXPECT_EQ(run("diff " + kBroken).rc, 2);  // AFTER missing
  EXPECT_EQ(run("diff --fail-if-slower fast " + kBroken + " " + kFixed).rc, 2);
  EXPECT_EQ(run("diff --format pdf " + kBroken + " " + kFixed).rc, 2);
  const Output missing = run("diff " + kBroken + " " + dir() + "/no_such_trace.json");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("AFTER"), std::string::npos) << missing.err;
  const std::string other = dir() + "/future.json";
  std::ofstream(other) << "{\"schema\": \"chokepoint.report/9\", \"window\": {}}\n";
  const Output future = run("diff " + other + " " + kFixed);
  EXPECT_EQ(future.rc, 1);
  EXPECT_NE(future.err.find("chokepoint.report/9"), std::string::npos) << future.err;
}

}  // namespace
