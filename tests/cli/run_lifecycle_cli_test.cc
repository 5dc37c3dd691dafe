// End-to-end tests of how `chokepoint run` ends: --duration and its grace period over the
// command's whole process group, signals forwarded to the command, kill -9, a command that
// cannot start, a closed stderr; each leaves a recording that analyzes, or nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "run_cli_util.h"

namespace {

namespace fs = std::filesystem;
using chokepoint::run_cli_test::kExe;
using chokepoint::run_cli_test::Output;
using chokepoint::run_cli_test::report_json;
using chokepoint::run_cli_test::run;
using chokepoint::run_cli_test::slurp;
using chokepoint::run_cli_test::temp_dir;

// True once `pid` is no longer running (gone, or a zombie its new parent has yet to
// reap), polled for up to `ms`.
bool gone_within(pid_t pid, int ms) {
  for (int waited = 0;; waited += 50) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') return true;
    if (waited >= ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Issue 13: --duration stopped the direct child only; a shell's background job lived on.
TEST(RunCli, DurationStopsTheCommandsChildrenToo) {
  const std::string d = temp_dir("grandchild");
  Output o = run(
      d, "run --view none -q --duration 1s -o " + d + "/rec -- sh -c 'sleep 100 & echo $! > " + d + "/gc.pid; wait'");
  EXPECT_EQ(o.rc, 128 + SIGTERM) << o.err;
  const pid_t grandchild = std::atoi(slurp(d + "/gc.pid").c_str());
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(gone_within(grandchild, 2000)) << "sleep 100 outlived run --duration 1s";
  kill(grandchild, SIGKILL);
}

// A child of the command that ignores SIGTERM is killed with the whole group after the
// 10 s grace period, even though the command itself exited at once.
TEST(RunCli, DurationKillsAGrandchildThatIgnoresSigterm) {
  const std::string d = temp_dir("grandchild_term");
  const auto t0 = std::chrono::steady_clock::now();
  Output o = run(d, "run --view none -q --duration 1s -o " + d +
                        "/rec -- sh -c '(trap \"\" TERM; exec sleep 100) & "
                        "echo $! > " +
                        d + "/gc.pid; wait'");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(o.rc, 128 + SIGTERM) << o.err;
  const pid_t grandchild = std::atoi(slurp(d + "/gc.pid").c_str());
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(gone_within(grandchild, 2000)) << "a SIGTERM-ignoring grandchild outlived run";
  EXPECT_GE(took, 10.0) << "killed before the grace period";
  EXPECT_LT(took, 30.0);
  kill(grandchild, SIGKILL);
}

// Issue 13: started with stderr closed, chokepoint opened samples.jsonl as fd 2 and wrote
// its own messages into the recording.
TEST(RunCli, ClosedStderrDoesNotEndUpInTheRecording) {
  const std::string d = temp_dir("closed_stderr");
  const std::string cmd = "NO_COLOR=1 CHOKEPOINT_PROFILE=none CHOKEPOINT_NVML_LIB=/nonexistent " + kExe +
                          " run --view lines -o " + d + "/rec -- sleep 0.3 </dev/null >/dev/null 2>&-";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string samples = slurp(d + "/rec/samples.jsonl");
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(samples.find("chokepoint"), std::string::npos) << samples.substr(0, 400);
  std::istringstream in(samples);
  for (std::string line; std::getline(in, line);) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  }
}

// Issue 13: --report was checked only after the job ran.
TEST(RunCli, ReportInAMissingDirectoryIsRefusedBeforeTheCommandRuns) {
  const std::string d = temp_dir("report_dir");
  Output o = run(d, "run --view none -q -o " + d + "/rec --report /nonexistent/dir/r.json -- touch " + d + "/marker");
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find("cannot write the report to /nonexistent/dir/r.json: no directory /nonexistent/dir"),
            std::string::npos)
      << o.err;
  EXPECT_FALSE(fs::exists(d + "/marker")) << "the command ran";
  EXPECT_FALSE(fs::exists(d + "/rec")) << "a recording was started";
  o = run(d, "run --view none -q -o " + d + "/rec --report " + d + " -- touch " + d + "/marker");
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find("is a directory"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(d + "/marker"));
}

// Issue 13: a command that could not start left meta.json and samples.jsonl behind, and
// the retry with the same -o was refused as "already holds a recording".
TEST(RunCli, ExecFailureLeavesNothingThatBlocksARetry) {
  const std::string d = temp_dir("retry");
  Output o = run(d, "run --view none -q -o " + d + "/rec -- no-such-command-xyz");
  EXPECT_EQ(o.rc, 127) << o.err;
  EXPECT_FALSE(fs::exists(d + "/rec")) << "the directory this run created stays";
  o = run(d, "run --view none -q -o " + d + "/rec -- true");
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(d + "/rec/meta.json"))["command"][0], "true");
  // A directory that was there before is kept, empty as it was.
  fs::create_directories(d + "/mine");
  o = run(d, "run --view none -q -o " + d + "/mine -- no-such-command-xyz");
  EXPECT_EQ(o.rc, 127) << o.err;
  EXPECT_TRUE(fs::is_directory(d + "/mine"));
  EXPECT_TRUE(fs::is_empty(d + "/mine"));
}

// Runs `chokepoint run -- python3 SCRIPT` in the background (SCRIPT prints "ready" once
// it runs), sends `sig` to chokepoint alone, and returns chokepoint's exit code; its
// stderr is d/err. -1 when it did not exit normally.
int run_and_signal(const std::string& d, const std::string& script_text, int sig) {
  const std::string script = d + "/s.py";
  { std::ofstream(script) << script_text; }
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const std::string out = d + "/out", err = d + "/err", rec = d + "/rec";
    freopen(out.c_str(), "w", stdout);
    freopen(err.c_str(), "w", stderr);
    setenv("CHOKEPOINT_NVML_LIB", "/nonexistent", 1);
    execl(kExe.c_str(), kExe.c_str(), "run", "--view", "none", "-o", rec.c_str(), "--", "python3", script.c_str(),
          static_cast<char*>(nullptr));
    _exit(99);
  }
  // Wait until the command runs, then signal chokepoint alone.
  for (int i = 0; i < 100 && slurp(d + "/out").find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RunCli, SigtermIsForwardedAndTheChildsCodeReturned) {
  const std::string d = temp_dir("term");
  const int rc = run_and_signal(d,
                                "import signal, sys, time\n"
                                "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
                                "print('ready', flush=True)\n"
                                "time.sleep(30)\n",
                                SIGTERM);
  EXPECT_EQ(rc, 7) << slurp(d + "/err");
  EXPECT_NE(slurp(d + "/err").find("Bound by:"), std::string::npos);
}

// kill -INT to chokepoint alone: forwarded to the command's process group; Python's
// KeyboardInterrupt ends it with SIGINT (128 + 2).
TEST(RunCli, SigintIsForwardedToo) {
  const std::string d = temp_dir("int");
  const int rc = run_and_signal(d, "import time\nprint('ready', flush=True)\ntime.sleep(30)\n", SIGINT);
  EXPECT_EQ(rc, 128 + SIGINT) << slurp(d + "/err");
  EXPECT_NE(slurp(d + "/err").find("interrupted: waiting for the command to exit"), std::string::npos);
  const auto meta = nlohmann::json::parse(slurp(d + "/rec/meta.json"));
  EXPECT_EQ(meta["exit_code"], 128 + SIGINT);
}

// Issue 47: the signals a job may use (SIGUSR1 for a checkpoint, SIGALRM) used to kill
// chokepoint at their default action, and the job with it, leaving the recording
// unfinished. They reach the job's first process; the run goes on and ends as the job does.
TEST(RunCli, UserSignalsAreForwardedToTheJobAndTheRecordingIsFinished) {
  for (const int sig : {SIGUSR1, SIGALRM, SIGUSR2}) {
    const std::string d = temp_dir("usr" + std::to_string(sig));
    const int rc = run_and_signal(d,
                                  "import signal, sys, time\n"
                                  "signal.signal(" +
                                      std::to_string(sig) +
                                      ", lambda *a: sys.exit(5))\n"
                                      "print('ready', flush=True)\n"
                                      "time.sleep(30)\n",
                                  sig);
    SCOPED_TRACE(sig);
    EXPECT_EQ(rc, 5) << slurp(d + "/err");
    const auto meta = nlohmann::json::parse(slurp(d + "/rec/meta.json"));
    EXPECT_EQ(meta["exit_code"], 5);
    EXPECT_TRUE(meta.contains("end_ns"));
  }
}

// SIGQUIT (Ctrl-backslash on a terminal) stops the monitoring as SIGTERM does: forwarded, the job's code returned,
// the recording finished.
TEST(RunCli, SigquitIsForwardedAndTheRecordingFinished) {
  const std::string d = temp_dir("quit");
  const int rc = run_and_signal(d,
                                "import signal, sys, time\n"
                                "signal.signal(signal.SIGQUIT, lambda *a: sys.exit(9))\n"
                                "print('ready', flush=True)\n"
                                "time.sleep(30)\n",
                                SIGQUIT);
  EXPECT_EQ(rc, 9) << slurp(d + "/err");
  EXPECT_EQ(nlohmann::json::parse(slurp(d + "/rec/meta.json"))["exit_code"], 9);
}

// --report onto a symbolic link is refused before the job runs, not after (the report
// was lost, rc 0).
TEST(RunCli, ReportOntoASymlinkIsRefusedBeforeTheCommandRuns) {
  const std::string d = temp_dir("replink");
  fs::create_symlink(d + "/elsewhere.json", d + "/report.json");
  const Output o = run(d, "run --view none -q -o " + d + "/rec --report " + d + "/report.json -- touch " + d + "/ran");
  EXPECT_EQ(o.rc, 2) << o.err;
  EXPECT_NE(o.err.find("symbolic link"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(d + "/ran"));
  EXPECT_FALSE(fs::exists(d + "/elsewhere.json"));
}

// The ticks a running recorder has written to REC's samples.jsonl so far.
int ticks_on_disk(const std::string& rec) {
  std::ifstream in(rec + "/samples.jsonl");
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind("{\"k\":\"tick\"", 0) == 0;
  return n;
}

// Issue 47: a recording still being written (analyze while the job runs) was called a
// crash. Its chokepoint runs on this host: the report says the run has not ended.
TEST(RunCli, ARecordingStillBeingWrittenIsNotACrash) {
  const std::string d = temp_dir("inprogress");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string rec = d + "/rec", err = d + "/err";
    freopen(err.c_str(), "w", stderr);
    setenv("CHOKEPOINT_NVML_LIB", "/nonexistent", 1);
    execl(kExe.c_str(), kExe.c_str(), "run", "--view", "none", "-q", "--no-stacks", "--interval", "100ms", "-o",
          rec.c_str(), "--", "sleep", "6", static_cast<char*>(nullptr));
    _exit(99);
  }
  for (int i = 0; i < 100 && ticks_on_disk(d + "/rec") < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const Output o = run(d, "analyze " + d + "/rec -f json -o " + d + "/r.json");
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(o.rc, 0) << o.err;
  std::set<std::string> names;
  const auto report = report_json(d + "/r.json");
  for (const auto& st : report["import_stats"]) names.insert(st["name"].get<std::string>());
  EXPECT_EQ(names.count("recording_in_progress"), 1u);
  EXPECT_EQ(names.count("recording_incomplete"), 0u);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << slurp(d + "/err");
}

TEST(RunCli, KillNineLeavesARecordingThatAnalyzes) {
  const std::string d = temp_dir("kill9");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string err = d + "/err", rec = d + "/rec";
    freopen(err.c_str(), "w", stderr);
    setenv("CHOKEPOINT_NVML_LIB", "/nonexistent", 1);
    execl(kExe.c_str(), kExe.c_str(), "run", "--view", "none", "-o", rec.c_str(), "--", "sleep", "30",
          static_cast<char*>(nullptr));
    _exit(99);
  }
  // Kill it once 15 ticks are on disk (polling: sanitizer builds start slowly).
  for (int i = 0; i < 200 && ticks_on_disk(d + "/rec") < 15; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // The command gets SIGTERM when chokepoint dies (PR_SET_PDEATHSIG): `sleep` ends.
  const auto meta = nlohmann::json::parse(slurp(d + "/rec/meta.json"), nullptr, false);
  ASSERT_TRUE(meta.is_object());
  const pid_t command = meta.value("pid", 0);
  ASSERT_GT(command, 0);
  EXPECT_TRUE(gone_within(command, 3000)) << "the command outlived chokepoint's kill -9";
  kill(command, SIGKILL);  // in case it did not
  Output o = run(d, "analyze " + d + "/rec -f json -o " + d + "/r.json");
  ASSERT_EQ(o.rc, 0) << o.err;
  const auto r = report_json(d + "/r.json");
  EXPECT_FALSE(r["live"]["complete"].get<bool>());
  EXPECT_GE(r["live"]["ticks"].get<int>(), 15) << "the ticks written before the kill are all read";
  bool warned = false;
  for (const auto& s : r["import_stats"]) warned = warned || s["name"] == "recording_incomplete";
  EXPECT_TRUE(warned);
}

}  // namespace
