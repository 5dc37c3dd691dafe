// Issue 47, hostile input, second round: the commands added since the first round
// (`kernels`, `tune`, `trace`) and the options that ignored their input, as a hostile or
// careless user runs them. Each test is one failing case of the review, kept.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"

namespace {

namespace fs = std::filesystem;
using chokepoint::cli_test::expect_no_controls;

const std::string kExe = CHOKEPOINT_BINARY;
const std::string kData = CHOKEPOINT_TEST_DATA;

struct Output {
  int rc = -1;
  std::string out, err;
  double seconds = 0;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/hostile_cli_" + std::to_string(getpid()) + "_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// `chokepoint ARGS` in `dir`, without a GPU, a saved profile or colour.
Output run(const std::string& dir, const std::string& args) {
  const std::string cmd = "cd " + dir + " && NO_COLOR=1 CHOKEPOINT_PROFILE=none CHOKEPOINT_NVML_LIB=/nonexistent " +
                          kExe + " " + args + " >stdout 2>stderr </dev/null";
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  Output o;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(dir + "/stdout");
  o.err = slurp(dir + "/stderr");
  return o;
}

// `kernels` printed raw ESC, BEL and C1 bytes from kernel names, in text and Markdown,
// from a Kineto trace and from an ncu CSV; the other commands escaped them.
TEST(HostileCli, KernelsEscapesNamesFromTracesAndNcuExports) {
  const std::string d = temp_dir("kernels");
  for (const char* format : {"text", "md"}) {
    SCOPED_TRACE(format);
    const Output o = run(d, "kernels -f " + std::string(format) + " " + kData + "/hostile/hostile_names.json");
    ASSERT_EQ(o.rc, 0) << o.err;
    expect_no_controls(o.out);
    EXPECT_NE(o.out.find("gemm_\\x1b]0;pwned\\x07"), std::string::npos) << o.out;
  }
  // The same escapes planted in an ncu export's kernel and device names.
  const std::string csv = d + "/hostile.csv";
  const std::string plant = "gzip -dc " + kData +
                            "/kernels/raw_metrics.csv.gz | sed \"s/nvjet_sm90/$(printf '\\033]0;pwned\\007\\033[2J')"
                            "nvjet_sm90/; s/axpy(/$(printf '\\302\\233\\233')axpy(/; s/NVIDIA H200/NVIDIA H200$(printf "
                            "'\\033]52;c;aGk=\\007')/\" > " +
                            csv;
  ASSERT_EQ(std::system(plant.c_str()), 0);
  ASSERT_NE(slurp(csv).find("\x1b]0;pwned"), std::string::npos) << "the hostile names were not planted";
  for (const char* format : {"text", "md"}) {
    SCOPED_TRACE(format);
    const Output o = run(d, "kernels -f " + std::string(format) + " " + csv);
    ASSERT_EQ(o.rc, 0) << o.err;
    expect_no_controls(o.out);
    EXPECT_NE(o.out.find("\\x1b]0;pwned\\x07\\x1b[2Jnvjet_sm90"), std::string::npos) << o.out;
  }
}

// `trace --pid 0` printed the range of a double, 300 digits long.
TEST(HostileCli, TraceWithPidZeroSaysSoInOneShortLine) {
  const std::string d = temp_dir("pid0");
  for (const char* pid : {"0", "-5", "abc", "99999999999"}) {
    SCOPED_TRACE(pid);
    const Output o = run(d, "trace --pid " + std::string(pid) + " --steps 2");
    EXPECT_EQ(o.rc, 2) << o.err;
    EXPECT_NE(o.err.find("is not a valid process id"), std::string::npos) << o.err;
    EXPECT_LT(o.err.size(), 200u) << o.err;
  }
}

// `--fail-on` with `--format chrome` was ignored: the export makes no findings, so a CI
// gate would always pass. It is refused, before anything is read or written.
TEST(HostileCli, FailOnWithATraceExportIsRefused) {
  const std::string d = temp_dir("failon");
  const Output o = run(
      d, "analyze --format chrome --fail-on critical -o " + d + "/t.json " + kData + "/kineto/input_bound.json.gz");
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find("--fail-on"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(d + "/t.json"));
}

// `tune --metric` ran on std::regex: "(a+)+$" backtracked for ever on a line of a's (and
// --timeout, SIGTERM and SIGINT no longer stopped tune), and ".*samples/s: ..." on a
// 200,000-character line overflowed the stack (rc 139). RE2 takes time linear in the line.
TEST(HostileCli, TuneMetricPatternsRunInLinearTime) {
  const std::string d = temp_dir("tune_re");
  {
    std::ofstream(d + "/prog.py") << "import sys\n"
                                     "for i in range(4):\n"
                                     "    print('a' * 5000 + '!', flush=True)\n"
                                     "    print('x' * 200000 + ' samples/s: 12.5', flush=True)\n";
  }
  Output o = run(d,
                 "tune --param x=1 --metric '(a+)+$' --steps 2 --warmup 0 --timeout 60s --no-gpu -q -f json "
                 "-- python3 prog.py --x {x}");
  EXPECT_EQ(o.rc, 1) << o.err;  // no line matches: no best trial
  EXPECT_NE(o.out.find("printed no line that --metric matches"), std::string::npos) << o.out;
  EXPECT_LT(o.seconds, 30) << "a backtracking pattern held tune";
  o = run(d,
          "tune --param x=2 --metric '.*samples/s: ([0-9.]+)' --steps 2 --warmup 0 --timeout 60s --no-gpu -q "
          "-f json -o trials2 -- python3 prog.py --x {x}");
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["trials"].size(), 1u) << o.out;
  EXPECT_DOUBLE_EQ(j["trials"][0]["throughput"].get<double>(), 12.5) << o.out;
  // A pattern RE2 cannot take (a backreference) is a usage error that says why.
  o = run(d, "tune --param x=1 --metric '(a)\\1' -- python3 prog.py --x {x}");
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find("is not a regular expression"), std::string::npos) << o.err;
}

nlohmann::json analyze_json(const std::string& dir, const std::string& inputs, Output* out = nullptr) {
  const Output o = run(dir, "analyze -q -f json -o " + dir + "/r.json " + inputs);
  if (out != nullptr) *out = o;
  EXPECT_EQ(o.rc, 0) << o.err;
  return o.rc == 0 ? nlohmann::json::parse(slurp(dir + "/r.json")) : nlohmann::json();
}

bool has_stat(const nlohmann::json& r, const std::string& name) {
  for (const auto& s : r["import_stats"]) {
    if (s["name"] == name) return true;
  }
  return false;
}

// The same bytes under two names (a copy, a hard link) were two ranks, or twice the
// steps; a symbolic link loop in an input directory ended in "internal error" (rc 70).
TEST(HostileCli, DuplicatesAndLinkLoopsInADirectoryOfTraces) {
  const std::string d = temp_dir("dups");
  const std::string trace = kData + "/kineto/input_bound.json.gz";
  const auto single = analyze_json(d, trace);
  fs::create_directories(d + "/traces");
  fs::copy_file(trace, d + "/traces/a.json.gz");
  fs::copy_file(trace, d + "/traces/b.json.gz");
  fs::create_hard_link(d + "/traces/a.json.gz", d + "/traces/c.json.gz");
  fs::create_symlink("loop.json", d + "/traces/loop.json");
  const auto r = analyze_json(d, d + "/traces");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["window"]["steps"], single["window"]["steps"]);
  EXPECT_DOUBLE_EQ(r["window"]["step_time_ms"]["mean"].get<double>(),
                   single["window"]["step_time_ms"]["mean"].get<double>());
  EXPECT_TRUE(has_stat(r, "import_same_content")) << r["import_stats"];
  EXPECT_TRUE(has_stat(r, "import_broken_entries")) << r["import_stats"];
  EXPECT_FALSE(r.contains("distributed")) << "one trace under three names is not three ranks";
  // Named twice on the command line: the same.
  const auto twice = analyze_json(d, trace + " " + d + "/traces/b.json.gz");
  EXPECT_EQ(twice["window"]["steps"], single["window"]["steps"]);
  // One path given twice (it was 8 steps for 4 counted).
  const auto same_path = analyze_json(d, trace + " " + trace);
  EXPECT_EQ(same_path["window"]["steps"], single["window"]["steps"]);
  EXPECT_TRUE(has_stat(same_path, "import_same_content")) << same_path["import_stats"];
}

// A .json.gz cut before its first inflated byte was "the file is empty"; a trace whose
// "traceEvents" come after a 20 MiB member was "not a recognized trace format".
TEST(HostileCli, ACutGzipAndALateTraceKeyAreSaidForWhatTheyAre) {
  const std::string d = temp_dir("cut");
  const std::string trace = kData + "/kineto/input_bound.json.gz";
  const std::string cut = "head -c 20 " + trace + " > " + d + "/cut.json.gz";
  ASSERT_EQ(std::system(cut.c_str()), 0);
  Output o = run(d, "analyze " + d + "/cut.json.gz");
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(o.err.find("cut off or damaged"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("empty"), std::string::npos) << o.err;

  const std::string late =
      "python3 -c \"import gzip, json, sys; t = json.load(gzip.open(sys.argv[1])); "
      "out = {'otherData': 'x' * (20 << 20)}; out.update(t); json.dump(out, open(sys.argv[2], 'w'))\" " +
      trace + " " + d + "/late.json";
  ASSERT_EQ(std::system(late.c_str()), 0);
  const auto single = analyze_json(d, trace);
  const auto r = analyze_json(d, d + "/late.json");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["window"]["steps"], single["window"]["steps"]);
  fs::remove(d + "/late.json");
}

// Every command's --format is one option read from one list (report/formats.h): an
// unknown name is refused the same way, before anything runs, naming what that command
// takes; and a format one command has is named as missing where another lacks it.
TEST(FormatOption, EveryCommandRefusesAnUnknownFormatTheSameWay) {
  const std::string d = temp_dir("formats");
  const std::string trace = kData + "/kineto/input_bound.json.gz";
  const std::string profile = kData + "/kernels/h200_run/profile.json";
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"analyze " + trace, "text, json, md, html, chrome (perfetto)"},
      {"run -- true", "text, json, md, html"},
      {"diff " + trace + " " + trace, "text, json, md, html"},
      {"kernels " + trace, "text, json, md"},
      {"tune --param batch=1,2 -- echo {batch}", "text, json, md"},
      {"doctor", "text, json"},
      {"bench --show " + profile, "text, json"},
  };
  for (const auto& [command, names] : commands) {
    SCOPED_TRACE(command);
    const std::string verb = command.substr(0, command.find(' '));
    const Output o = run(d, verb + " --format yaml" + command.substr(verb.size()));
    EXPECT_EQ(o.rc, 2) << o.err;
    EXPECT_NE(o.err.find("--format: unknown format 'yaml' (use " + names + ")"), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "");
  }
  const Output html = run(d, "kernels --format html " + trace);
  EXPECT_EQ(html.rc, 2);
  EXPECT_NE(html.err.find("'html' is not a format of this command (use text, json, md)"), std::string::npos)
      << html.err;
}

// doctor and bench take --format json as analyze does; --json stays as its alias.
TEST(FormatOption, DoctorAndBenchWriteJsonByFormatAndByTheOldFlag) {
  const std::string d = temp_dir("json_formats");
  const std::string profile = kData + "/kernels/h200_run/profile.json";
  for (const std::string& flag : {std::string("--format json"), std::string("-f json"), std::string("--json")}) {
    SCOPED_TRACE(flag);
    const Output doctor = run(d, "doctor " + flag);
    ASSERT_FALSE(doctor.out.empty()) << doctor.err;
    EXPECT_EQ(nlohmann::json::parse(doctor.out).at("schema"), "chokepoint.doctor/2");
    const Output bench = run(d, "bench " + flag + " --show " + profile);
    ASSERT_EQ(bench.rc, 0) << bench.err;
    const auto j = nlohmann::json::parse(bench.out);
    EXPECT_EQ(j.at("schema"), "chokepoint.profile/1");
    EXPECT_FALSE(j.at("gpus").empty());
  }
  const Output text = run(d, "bench --format text --show " + profile);
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("GPU 0"), std::string::npos) << text.out;
}

}  // namespace
