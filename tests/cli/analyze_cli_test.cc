// End-to-end tests of `chokepoint analyze` as a user runs it: exit codes, messages on bad
// input, output files, colour, directories.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"

namespace {

using chokepoint::cli_test::expect_no_controls;

const std::string kExe = CHOKEPOINT_BINARY;
const std::string kData = std::string(CHOKEPOINT_TEST_DATA) + "/kineto/";

using Output = chokepoint::cli_test::Combined;

// `chokepoint ARGS` with the published ceilings only, whatever `bench --save` left here.
Output run(const std::string& args, const std::string& env = "") {
  return chokepoint::cli_test::run_combined("CHOKEPOINT_PROFILE=none " + env + " " + kExe + " " + args, "cli");
}

TEST(AnalyzeCli, TextReportOnStdout) {
  Output o = run("analyze " + kData + "input_bound.json.gz", "NO_COLOR=1");
  EXPECT_EQ(o.rc, 0);
  EXPECT_NE(o.out.find("Bound by: input"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("input-pipeline-stall"), std::string::npos);
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos);  // no colour into a file
}

// Issue 15's CI gate: the report is written either way; exit 3 when a finding is at or
// above the bar. input_bound holds a critical input-pipeline-stall, healthy_bf16 only a
// warning (memory-bound-elementwise).
TEST(AnalyzeCli, FailOnIsACiGate) {
  Output crit = run("analyze --fail-on critical " + kData + "input_bound.json.gz");
  EXPECT_EQ(crit.rc, 3) << crit.out;
  EXPECT_NE(crit.out.find("Bound by: input"), std::string::npos) << crit.out;
  EXPECT_NE(crit.out.find("1 finding at or above critical (--fail-on): exit status 3"), std::string::npos);
  EXPECT_EQ(run("analyze --fail-on critical " + kData + "healthy_bf16.json.gz").rc, 0);
  EXPECT_EQ(run("analyze --fail-on warning " + kData + "healthy_bf16.json.gz").rc, 3);
  EXPECT_EQ(run("analyze " + kData + "input_bound.json.gz").rc, 0);
  EXPECT_EQ(run("analyze --fail-on info " + kData + "input_bound.json.gz").rc, 2);
}

TEST(AnalyzeCli, ColourOnlyWhenAsked) {
  Output o = run("analyze --color always " + kData + "input_bound.json.gz");
  EXPECT_EQ(o.rc, 0);
  EXPECT_NE(o.out.find('\x1b'), std::string::npos);
}

TEST(AnalyzeCli, JsonFollowsTheContract) {
  Output o = run("analyze --format json -q " + kData + "pageable_copy.json.gz");
  ASSERT_EQ(o.rc, 0);
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j.at("schema"), "chokepoint.report/1");
  EXPECT_EQ(j.at("verdict").at("bound"), "transfer");
  EXPECT_EQ(j.at("window").at("steps"), 3);
  for (const char* key : {"tool", "inputs", "device", "window", "breakdown", "verdict", "findings", "import_stats"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
}

TEST(AnalyzeCli, UnknownFormatIsOneLineNamingTheFormats) {
  const std::string bad = ::testing::TempDir() + "/not_a_trace_" + std::to_string(getpid()) + ".txt";
  std::ofstream(bad) << "hello, this is not a trace\n";
  Output o = run("analyze " + bad);
  EXPECT_EQ(o.rc, 1);
  EXPECT_NE(o.out.find("not a recognized trace format"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("kineto"), std::string::npos);
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
}

TEST(AnalyzeCli, MissingFileAndBadOptions) {
  Output missing = run("analyze /nonexistent/trace.json");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.out.find("/nonexistent/trace.json"), std::string::npos);
  EXPECT_EQ(run("analyze --format yaml " + kData + "input_bound.json.gz").rc, 2);
  EXPECT_NE(run("analyze").rc, 0);
  EXPECT_EQ(run("--version").rc, 0);
}

TEST(AnalyzeCli, ListStatsNeedsNoInput) {
  Output o = run("analyze --list-stats");
  EXPECT_EQ(o.rc, 0) << o.out;
  for (const char* line : {"kineto_truncated ", "cupti_dropped_records ", "import_failed_files ", "malformed_lines ",
                           "trace_unreadable "}) {
    EXPECT_NE(o.out.find(std::string("\n") + line), std::string::npos) << line << "\n" << o.out;
  }
  EXPECT_NE(o.out.find("The trace ends in the middle of the data"), std::string::npos) << o.out;
  EXPECT_EQ(run("analyze --help").out.find("--list-stats") != std::string::npos, true);
  EXPECT_EQ(run("analyze").rc, 2);  // inputs are still required without it
}

TEST(AnalyzeCli, OutputFileAndDevNull) {
  const std::string out = ::testing::TempDir() + "/report_" + std::to_string(getpid()) + ".md";
  Output o = run("analyze --format md -o " + out + " " + kData + "fp32_gemm.json.gz");
  EXPECT_EQ(o.rc, 0);
  std::ifstream in(out);
  const std::string md((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(md.find("no-tensor-cores"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  // /dev/null must stay a device, not become a renamed temporary file.
  EXPECT_EQ(run("analyze -q -o /dev/null " + kData + "fp32_gemm.json.gz").rc, 0);
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AnalyzeCli, DirectoryOfTraces) {
  const std::string dir = ::testing::TempDir() + "/traces_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kData + "input_bound.json.gz", dir + "/rank0.json.gz",
                             std::filesystem::copy_options::overwrite_existing);
  // The same program recorded twice (with and without Python stacks): one job.
  std::filesystem::copy_file(kData + "input_bound_stack.json.gz", dir + "/rank1.json.gz",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir + "/notes.txt") << "ignored: not a trace name\n";
  Output o = run("analyze --format json -q " + dir);
  ASSERT_EQ(o.rc, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j.at("inputs").size(), 2u);
  EXPECT_EQ(j.at("window").at("steps"), 6);  // three per trace
  // Another program beside them: not pooled (it was, into one report of both), refused
  // with the jobs named.
  std::filesystem::copy_file(kData + "launch_bound.json.gz", dir + "/other.json.gz",
                             std::filesystem::copy_options::overwrite_existing);
  Output mixed = run("analyze -q " + dir);
  EXPECT_NE(mixed.rc, 0) << mixed.out;
  EXPECT_NE(mixed.out.find("2 different jobs"), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("other.json.gz"), std::string::npos) << mixed.out;
  std::filesystem::remove_all(dir);
}

TEST(AnalyzeCli, ChromeTraceOfARecordingToAFile) {
  const std::string out = ::testing::TempDir() + "/trace_" + std::to_string(getpid()) + ".json";
  Output o = run("analyze --format chrome -o " + out + " " + std::string(CHOKEPOINT_TEST_DATA) +
                 "/tracer/known_counts.rec");
  ASSERT_EQ(o.rc, 0) << o.out;
  EXPECT_NE(o.out.find("ui.perfetto.dev"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp" + std::to_string(getpid())));
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  int kernels = 0, counters = 0;
  for (const auto& e : j.at("traceEvents")) {
    kernels += e.at("ph") == "X" && e.value("cat", "") == "kernel";
    counters += e.at("ph") == "C";
  }
  EXPECT_EQ(kernels, 100);  // the trace's kernels ...
  EXPECT_GT(counters, 0);   // ... and the recording's samples
  EXPECT_EQ(j.at("displayTimeUnit"), "ns");
}

TEST(AnalyzeCli, PerfettoIsChromeOnStdout) {
  Output o = run("analyze -q -f perfetto " + kData + "pageable_copy.json.gz");
  ASSERT_EQ(o.rc, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_GT(j.at("traceEvents").size(), 100u);
}

TEST(AnalyzeCli, UnknownFormatNamesChromeToo) {
  Output o = run("analyze --format yaml " + kData + "input_bound.json.gz");
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.out.find("chrome"), std::string::npos) << o.out;
}

}  // namespace

// --ceilings FILE: the analysis judges against a bench profile named on the command line,
// and the report says where its ceilings came from.
TEST(AnalyzeCli, CeilingsFromANamedProfile) {
  const std::string file = ::testing::TempDir() + "/ceilings_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream out(file);
    out << R"({"schema": "chokepoint.profile/1", "gpus": [{"name": "NVIDIA H200", "results": [
      {"key": "gemm_bf16", "status": "ok", "value": 620.0},
      {"key": "h2d_pinned", "status": "ok", "value": 52.0}]}]})";
  }
  Output o = run("analyze --format json -q --ceilings " + file + " " + kData + "small_grid.json.gz");
  ASSERT_EQ(o.rc, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  const auto& c = j.at("device").at("ceilings");
  EXPECT_EQ(c.at("source"), "profile:" + file);
  EXPECT_EQ(c.at("bf16_tflops"), 620.0);
  EXPECT_EQ(c.at("pcie_gbps"), 52.0);
  EXPECT_EQ(c.at("hbm_gbps"), 4800.0) << "what the profile did not measure stays published";

  Output plain = run("analyze --format json -q --no-saved-profile " + kData + "small_grid.json.gz");
  ASSERT_EQ(plain.rc, 0);
  EXPECT_EQ(nlohmann::json::parse(plain.out).at("device").at("ceilings").at("source"), "published:H200 SXM");

  {
    std::ofstream out(file);
    out << R"({"schema": "chokepoint.report/1"})";
  }
  Output bad = run("analyze -q --ceilings " + file + " " + kData + "small_grid.json.gz");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.out.find("--ceilings: " + file + ": profile schema"), std::string::npos) << bad.out;
  EXPECT_EQ(run("analyze -q --ceilings /nonexistent/p.json " + kData + "small_grid.json.gz").rc, 2);
  std::filesystem::remove(file);
}

// Issue 13, hostile input: names in a trace (and the trace's own file name) that carry
// terminal escapes reach the output with every control character shown as an escape.
const std::string kHostile = std::string(CHOKEPOINT_TEST_DATA) + "/hostile/hostile_names.json";

TEST(AnalyzeCli, HostileNamesNeverReachTheTerminalRaw) {
  for (const char* format : {"text", "md"}) {
    Output o = run("analyze --format " + std::string(format) + " --color never " + kHostile);
    ASSERT_EQ(o.rc, 0) << o.out;
    SCOPED_TRACE(format);
    expect_no_controls(o.out);
    EXPECT_EQ(o.out.find('\x1b'), std::string::npos);
    EXPECT_EQ(o.out.find('\x07'), std::string::npos);
    EXPECT_EQ(o.out.find("\xc2\x9b"), std::string::npos);
    // Shown, as visible escapes: the device name (in Markdown prose, with the escapes'
    // backslashes and brackets escaped in turn, so that it renders as the text does)
    // and the kernels.
    const std::string device = format == std::string("text")
                                   ? "H200 \\x1b]0;pwned\\x07\\x1b]52;c;aGk=\\x07\\x1b[2J\\u009b2J"
                                   : "H200 \\\\x1b\\]0;pwned\\\\x07\\\\x1b\\]52;c;aGk=\\\\x07\\\\x1b\\[2J\\\\u009b2J";
    EXPECT_NE(o.out.find(device), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("gemm_\\x1b]0;pwned\\x07\\x1b]52;c;aGk=\\x07"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("elementwise_\\x1b[2J\\u009b2J"), std::string::npos) << o.out;
  }
}

TEST(AnalyzeCli, HostileFileNameIsEscapedToo) {
  const std::string dir = ::testing::TempDir() + "/hostile_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string name =
      "\x1b]0;pwned\x07\x1b[2J\xc2\x9b"
      "2J\x9b"
      "trace.json";
  std::filesystem::copy_file(kHostile, dir + "/" + name, std::filesystem::copy_options::overwrite_existing);
  for (const char* format : {"text", "md"}) {
    Output o = run("analyze --format " + std::string(format) + " '" + dir + "/" + name + "'", "NO_COLOR=1");
    ASSERT_EQ(o.rc, 0) << o.out;
    SCOPED_TRACE(format);
    expect_no_controls(o.out);
    EXPECT_NE(o.out.find("\\x1b]0;pwned\\x07\\x1b[2J\\u009b2J\\x9btrace.json"), std::string::npos) << o.out;
  }
  std::filesystem::remove_all(dir);
}

// Issue 13, data destroyed: the report never replaces an input, never follows a link.
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(AnalyzeCli, ReportNeverReplacesTheTraceItReads) {
  const std::string dir = ::testing::TempDir() + "/same_file_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "/trace.json.gz";
  std::filesystem::copy_file(kData + "input_bound.json.gz", trace);
  const std::string before = slurp(trace);
  for (const char* format : {"text", "json", "chrome"}) {
    Output o = run("analyze -f " + std::string(format) + " " + trace + " -o " + trace);
    EXPECT_EQ(o.rc, 2) << o.out;
    EXPECT_NE(o.out.find("refusing to write '" + trace + "': it is the input '" + trace + "'"), std::string::npos)
        << o.out;
  }
  // Also through another name of the same file, and as a file of an input directory.
  std::filesystem::create_hard_link(trace, dir + "/alias.json.gz");
  Output o = run("analyze " + trace + " -o " + dir + "/alias.json.gz");
  EXPECT_EQ(o.rc, 2) << o.out;
  EXPECT_NE(o.out.find(dir + "/alias.json.gz"), std::string::npos) << o.out;
  o = run("analyze " + dir + " -o " + trace);
  EXPECT_EQ(o.rc, 2) << o.out;
  EXPECT_EQ(slurp(trace), before);
  std::filesystem::remove(dir + "/alias.json.gz");
  // A new file beside it is fine.
  EXPECT_EQ(run("analyze -q " + trace + " -o " + dir + "/report.txt").rc, 0);
  EXPECT_NE(slurp(dir + "/report.txt").find("Bound by: input"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(AnalyzeCli, ReportIsNotWrittenThroughASymlink) {
  const std::string dir = ::testing::TempDir() + "/symlink_out_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/victim") << "precious\n";
  std::filesystem::create_symlink(dir + "/victim", dir + "/report.json");
  Output o = run("analyze -f json " + kData + "input_bound.json.gz -o " + dir + "/report.json");
  EXPECT_EQ(o.rc, 1) << o.out;
  EXPECT_NE(o.out.find("symbolic link"), std::string::npos) << o.out;
  EXPECT_EQ(slurp(dir + "/victim"), "precious\n");
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/report.json"));
  // No temporary file left behind, none under a predictable name.
  const auto entries = std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator());
  EXPECT_EQ(entries, 2);
  std::filesystem::remove_all(dir);
}

// Issue 13, exit codes: a usage error is 2 with a message that says what is wrong, never
// CLI11's own codes (105-115) or wording.
TEST(Cli, UnknownCommandIsNamed) {
  Output o = run("bogus");
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.out.find("unknown command 'bogus'"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("A subcommand is required"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("analyze"), std::string::npos) << o.out;  // the commands there are
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
}

TEST(Cli, UsageErrorsExitTwo) {
  for (const char* args : {"", "analyze", "analyze --format", "analyze x --bogus", "analyze --color purple x",
                           "doctor extra", "bench --bogus", "run", "watch --interval", "--bogus"}) {
    Output o = run(args);
    EXPECT_EQ(o.rc, 2) << "chokepoint " << args << ":\n" << o.out;
    EXPECT_NE(o.out.find("--help"), std::string::npos) << o.out;
  }
  EXPECT_EQ(run("--help").rc, 0);
  EXPECT_EQ(run("analyze --help").rc, 0);
}

TEST(Cli, PidMustBeAProcessId) {
  for (const char* pid : {"abc", "0", "12x", "99999999999999999999999"}) {
    Output o = run(std::string("watch --pid ") + pid);
    EXPECT_EQ(o.rc, 2) << pid << ": " << o.out;
    std::string want = "'";  // built in steps: "'" + std::string(...) trips GCC 12's -Wrestrict
    want += pid;
    want += "' is not a valid process id";
    EXPECT_NE(o.out.find(want), std::string::npos) << o.out;
    EXPECT_LT(o.out.size(), 200u) << o.out;  // not the 300-digit range of a double
  }
}

// Issue 13: a FIFO (or a device) given as a trace is refused at once, not read forever.
TEST(AnalyzeCli, FifoIsRefusedQuickly) {
  const std::string fifo = ::testing::TempDir() + "/trace_fifo_" + std::to_string(getpid()) + ".json";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string err = ::testing::TempDir() + "/fifo_err_" + std::to_string(getpid());
  // `timeout` turns the old hang into exit status 124.
  const int status = std::system(("timeout 20 " + kExe + " analyze " + fifo + " >/dev/null 2>" + err).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(err);
  const std::string msg((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(msg.find("cannot read '" + fifo + "': a FIFO (named pipe)"), std::string::npos) << msg;
  Output dev = run("analyze /dev/zero");
  EXPECT_EQ(dev.rc, 1);
  EXPECT_NE(dev.out.find("a character device"), std::string::npos) << dev.out;
  std::filesystem::remove(fifo);
}

// Issue 13: a FIFO given as --ceilings, or planted as a recording's meta.json, hung too.
TEST(AnalyzeCli, FifoAsCeilingsOrMetaJsonDoesNotHang) {
  const std::string base = ::testing::TempDir() + "/fifo2_" + std::to_string(getpid());
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base + "/rec");
  ASSERT_EQ(::mkfifo((base + "/ceilings.json").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((base + "/rec/meta.json").c_str(), 0600), 0);
  std::filesystem::copy_file(std::string(CHOKEPOINT_TEST_DATA) + "/live/healthy_bf16/samples.jsonl.gz",
                             base + "/rec/samples.jsonl.gz");
  // `timeout` turns a hang into exit status 124.
  Output c = run("analyze --ceilings " + base + "/ceilings.json " + kData + "small_grid.json.gz", "timeout 20");
  EXPECT_NE(c.rc, 124);
  EXPECT_NE(c.out.find("a FIFO (named pipe), not a file"), std::string::npos) << c.out;
  Output r = run("analyze " + base + "/rec", "timeout 20");
  EXPECT_EQ(r.rc, 0) << r.out;  // the samples are read; meta.json's absence is a warning
  EXPECT_NE(r.out.find("meta_unreadable"), std::string::npos) << r.out;
  std::filesystem::remove_all(base);
}

// Issue 13: trace.json beside trace.json.gz (a `gunzip -k`) is one run, not two ranks.
TEST(AnalyzeCli, PlainAndGzippedCopiesOfOneTraceAreReadOnce) {
  const std::string dir = ::testing::TempDir() + "/twins_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kData + "input_bound.json.gz", dir + "/trace.json.gz");
  ASSERT_EQ(std::system(("gzip -dc " + dir + "/trace.json.gz > " + dir + "/trace.json").c_str()), 0);
  Output o = run("analyze --format json -q " + dir);
  ASSERT_EQ(o.rc, 0) << o.out;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j.at("inputs").size(), 1u) << j.at("inputs").dump();
  EXPECT_EQ(j.at("inputs")[0].at("path"), dir + "/trace.json");
  EXPECT_EQ(j.at("window").at("steps"), 3);  // not six: the same three steps once
  bool said = false;
  for (const auto& s : j.at("import_stats")) {
    if (s.at("name") == "import_duplicate_files") {
      said = true;
      EXPECT_EQ(s.at("count"), 1);
      EXPECT_NE(
          s.at("description").get<std::string>().find("read " + dir + "/trace.json, not " + dir + "/trace.json.gz"),
          std::string::npos)
          << s.dump();
    }
  }
  EXPECT_TRUE(said) << j.at("import_stats").dump();
  std::filesystem::remove_all(dir);
}

// Issue 13: error messages quote file names, which may hold escapes too.
TEST(AnalyzeCli, ErrorMessagesEscapeTheNamesTheyQuote) {
  const std::string dir = ::testing::TempDir() + "/hostile_err_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Output o = run("analyze '" + dir + "/\x1b]0;pwned\x07missing.json'");
  EXPECT_EQ(o.rc, 1);
  expect_no_controls(o.out);
  EXPECT_NE(o.out.find("\\x1b]0;pwned\\x07missing.json"), std::string::npos) << o.out;
  std::filesystem::remove_all(dir);
}

// `chokepoint explain`: the glossary of ids a report prints.
TEST(ExplainCli, ExplainsAFindingARemedyAndAVerdict) {
  Output o = run("explain input-pipeline-stall");
  EXPECT_EQ(o.rc, 0);
  EXPECT_EQ(o.out.rfind("input-pipeline-stall (finding)\n  What it means:\n", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("How it is detected:"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("num_workers"), std::string::npos) << o.out;
  o = run("explain cuda-graphs");
  EXPECT_EQ(o.rc, 0);
  EXPECT_EQ(o.out.rfind("cuda-graphs (remedy)\n", 0), 0u) << o.out;
  o = run("explain idle");
  EXPECT_EQ(o.rc, 0);
  EXPECT_EQ(o.out.rfind("idle (verdict)\n", 0), 0u) << o.out;
}

TEST(ExplainCli, WithoutAnIdListsEveryId) {
  Output o = run("explain");
  EXPECT_EQ(o.rc, 0);
  for (const char* id : {"Findings:", "input-pipeline-stall", "dev-shm", "Remedies:", "processes-not-threads",
                         "Verdicts:", "communication", "unknown"}) {
    EXPECT_NE(o.out.find(id), std::string::npos) << id << "\n" << o.out;
  }
}

TEST(ExplainCli, UnknownIdIsAUsageError) {
  Output o = run("explain 'no-such-rule\x1b]0;x\x07'");
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.out.find("unknown id 'no-such-rule\\x1b]0;x\\x07'"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
}
