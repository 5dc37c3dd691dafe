// End-to-end tests of trace windows: the `chokepoint run` options that set them, and
// `chokepoint trace`, which asks a running job's tracer for one; and of `chokepoint watch`,
// which samples a process it did not start.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "run_cli_util.h"

namespace {

namespace fs = std::filesystem;
using namespace chokepoint::run_cli_test;  // kExe, Output, report_json, run, temp_dir

// Trace windows (docs/RECORDING.md "Trace windows"). No GPU here: CHOKEPOINT_TRACER_LIB
// names any file (nothing loads it without CUDA), and what reaches the job is its
// environment; the control channel's far end is a Python job that listens as the tracer
// does.
const std::string kAnyTracer = "CHOKEPOINT_NVML_LIB=/nonexistent/libnvidia-ml.so.1 CHOKEPOINT_TRACER_LIB=/bin/true";

TEST(RunCli, TraceWindowOptionsReachTheJob) {
  const std::string d = temp_dir("window");
  const std::string show = "-- sh -c 'echo \"[$CHOKEPOINT_TRACE_WINDOW]\"'";
  Output o = run(d, "run --view none -q -o " + d + "/a " + show, kAnyTracer);
  EXPECT_EQ(o.out, "[]\n") << "no trace, no window";
  o = run(d, "run --trace --view none -q -o " + d + "/b " + show, kAnyTracer);
  EXPECT_EQ(o.out, "[]\n") << "the whole job";
  o = run(d, "run --trace-steps 100:20 --view none -q -o " + d + "/c " + show, kAnyTracer);
  EXPECT_EQ(o.out, "[steps=100:20]\n") << o.err;
  o = run(d, "run --trace-time 1m:10s --trace-every 10m --view none -q -o " + d + "/d " + show, kAnyTracer);
  EXPECT_EQ(o.out, "[at=60000000000,for=10000000000,every=600000000000]\n") << o.err;
  o = run(d, "run --trace=on-demand --view none -q -o " + d + "/e " + show, kAnyTracer);
  EXPECT_EQ(o.out, "[on-demand]\n") << o.err;
}

TEST(RunCli, TraceWindowUsageErrors) {
  const std::string d = temp_dir("windowusage");
  for (const char* args :
       {"--trace-steps 20", "--trace-steps 5:0", "--trace-time 10s", "--trace-time 1s:0s", "--trace-every 1m",
        "--trace-steps 1:2 --trace-time 1s:1s", "--trace=sometimes", "--trace=on-demand --trace-steps 1:2",
        "--trace-time 0s:5s --trace-every 5s", "--trace on-demand --"}) {
    Output o = run(d, std::string("run --view none -q -o ") + d + "/rec " + args + " -- true", kAnyTracer);
    EXPECT_EQ(o.rc, 2) << args << ": " << o.err;
    EXPECT_FALSE(fs::exists(d + "/rec")) << args;
  }
}

// A job that listens as the tracer does (control-PID.sock in $CHOKEPOINT_TRACE_DIR, 0600)
// and answers each request with what it got.
constexpr const char* kListener =
    "import os, socket, sys, time\n"
    "path = os.path.join(os.environ['CHOKEPOINT_TRACE_DIR'], 'control-%d.sock' % os.getpid())\n"
    "s = socket.socket(socket.AF_UNIX); s.bind(path); os.chmod(path, 0o600); s.listen(1)\n"
    "c, _ = s.accept(); line = c.makefile().readline().strip()\n"
    "c.sendall(('ok got ' + line + '\\n').encode()); c.close(); os.unlink(path)\n";

TEST(TraceCli, AsksTheJobOverItsSocketAndSaysWhyNot) {
  const std::string d = temp_dir("tracecli");
  { std::ofstream(d + "/listen.py") << kListener; }
  const pid_t job = fork();
  ASSERT_GE(job, 0);
  if (job == 0) {
    const std::string cmd = "NO_COLOR=1 CHOKEPOINT_PROFILE=none " + kAnyTracer + " exec " + kExe +
                            " run --trace=on-demand --view none -q -o " + d + "/rec -- python3 " + d +
                            "/listen.py >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(99);
  }
  // Should an assertion below end the test early, the job must not outlive it: its
  // listener would wait for a connection forever.
  struct Reaper {
    pid_t pid;
    bool reaped = false;
    ~Reaper() {
      if (!reaped) {
        kill(pid, SIGTERM);
        waitpid(pid, nullptr, 0);
      }
    }
  } reaper{job};
  bool listening = false;
  for (int i = 0; i < 200 && !listening; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // `run` makes the recording folder when it gets to it (later still on a busy sanitizer
    // build): not there yet is not an error.
    std::error_code ec;
    for (fs::directory_iterator it(d + "/rec", fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      listening = listening || it->path().filename().string().starts_with("control-");
    }
  }
  ASSERT_TRUE(listening);
  // Through run's pid: the traced process below it is asked.
  Output o = run(d, "trace --pid " + std::to_string(job) + " --duration 2s");
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find(": got duration 2000000000"), std::string::npos) << o.out;
  int status = 0;
  waitpid(job, &status, 0);
  reaper.reaped = true;
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);

  o = run(d, "trace --pid 999999999 --steps 1");
  EXPECT_EQ(o.rc, 1);
  EXPECT_NE(o.err.find("no process 999999999"), std::string::npos) << o.err;
  o = run(d, "trace --pid " + std::to_string(getpid()) + " --steps 1");
  EXPECT_EQ(o.rc, 1);
  EXPECT_NE(o.err.find("was not started by `chokepoint run --trace`"), std::string::npos) << o.err;
  EXPECT_EQ(run(d, "trace --pid 1").rc, 2) << "neither --steps nor --duration";
  EXPECT_EQ(run(d, "trace --pid 1 --steps 2 --duration 1s").rc, 2);
}

TEST(TraceCli, AJobWithAFixedWindowOrNoTracerYetIsSaid) {
  const std::string d = temp_dir("tracefixed");
  for (const char* mode : {"--trace-steps 5:5", "--trace=on-demand"}) {
    const std::string rec = d + "/rec" + std::to_string(mode[8] == 's');
    const pid_t job = fork();
    ASSERT_GE(job, 0);
    if (job == 0) {
      const std::string cmd = "NO_COLOR=1 CHOKEPOINT_PROFILE=none " + kAnyTracer + " exec " + kExe + " run " + mode +
                              " --view none -q -o " + rec + " -- sleep 3 >/dev/null 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(99);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    Output o = run(d, "trace --pid " + std::to_string(job) + " --steps 1");
    EXPECT_EQ(o.rc, 1) << mode;
    EXPECT_NE(o.err.find(mode[8] == 's' ? "fixed trace windows (steps=5:5)" : "has no tracer listening yet"),
              std::string::npos)
        << mode << ": " << o.err;
    kill(job, SIGTERM);
    int status = 0;
    waitpid(job, &status, 0);
  }
}

TEST(WatchCli, NoSuchProcessIsAClearError) {
  const std::string d = temp_dir("watchnone");
  Output o = run(d, "watch --view none --pid 999999999 -o " + d + "/rec");
  EXPECT_EQ(o.rc, 1);
  EXPECT_NE(o.err.find("no process with PID 999999999"), std::string::npos) << o.err;
}

TEST(WatchCli, WatchesAPidUntilItExits) {
  const std::string d = temp_dir("watch");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execlp("sleep", "sleep", "3", static_cast<char*>(nullptr));
    _exit(99);
  }
  Output o = run(
      d, "watch --view none --pid " + std::to_string(child) + " -o " + d + "/rec --report " + d + "/r.json -f json");
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.err.find("has exited"), std::string::npos) << o.err;
  const auto r = report_json(d + "/r.json");
  EXPECT_EQ(r["live"]["processes_seen"], 1);
  EXPECT_TRUE(r["live"]["command"].empty());
}

}  // namespace
