// `chokepoint tune` as a user runs it, on tests/data/tune/fake_train.py (a model of a
// training job with a planted optimum and an out-of-memory threshold): the best found and
// reported in JSON, a rerun that resumes without running a trial, Ctrl-C keeping the
// trials done, usage errors and a command that never prints its throughput.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;
const std::string kExe = CHOKEPOINT_BINARY;
const std::string kFake = std::string(CHOKEPOINT_TEST_DATA) + "/tune/fake_train.py";
const std::string kParams =
    "--param batch=64..512 --param workers=8,10,12 --param amp=off,bf16 --metric 'samples/s: ([0-9.]+)' "
    "--memory-metric 'peak_mem_mb: ([0-9]+)' --steps 3 --warmup 1 --no-gpu";
const std::string kCommand = " -- python3 " + kFake + " --batch-size {batch} --workers {workers} --amp {amp}";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/tune_cli_" + std::to_string(getpid()) + "_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct Output {
  int rc = -1;
  std::string out, err;
};

Output tune(const std::string& dir, const std::string& args) {
  const std::string cmd = "cd " + dir + " && NO_COLOR=1 CHOKEPOINT_NVML_LIB=/nonexistent " + kExe + " tune " + args +
                          " >stdout 2>stderr </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir + "/stdout"), slurp(dir + "/stderr")};
}

std::string best_config(const nlohmann::json& j) {
  for (const auto& t : j["trials"]) {
    if (t["id"] == j["best"]) {
      std::string s;
      for (const auto& kv : t["config"]) {
        if (!s.empty()) s += ' ';
        s.append(kv[0].get<std::string>()).append("=").append(kv[1].get<std::string>());
      }
      return s;
    }
  }
  return "";
}

TEST(TuneCli, FindsThePlantedBestAndResumesWithoutRunningAgain) {
  const std::string dir = temp_dir("best");
  const Output a = tune(dir, kParams + " -f json" + kCommand);
  ASSERT_EQ(a.rc, 0) << a.err;
  const nlohmann::json j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["schema"], "chokepoint.tune/1");
  EXPECT_EQ(best_config(j), "batch=512 workers=10 amp=bf16");
  EXPECT_EQ(j["grid_size"], 24);
  EXPECT_LE(j["trials_used"].get<int>() * 2, 24);
  EXPECT_EQ(j["max_fit_batch"], "512");
  EXPECT_FALSE(j["pareto"].empty());
  EXPECT_EQ(j["pareto"].back(), j["best"]);  // the most memory, the most throughput
  bool oom_seen = false;
  for (const auto& t : j["trials"]) oom_seen = oom_seen || t["outcome"] == "oom";
  EXPECT_TRUE(oom_seen);
  const Output b = tune(dir, kParams + " -f json" + kCommand);
  ASSERT_EQ(b.rc, 0) << b.err;
  const nlohmann::json k = nlohmann::json::parse(b.out);
  EXPECT_EQ(k["trials_run"], 0);
  EXPECT_EQ(k["trials_resumed"], j["trials_used"]);
  EXPECT_EQ(best_config(k), "batch=512 workers=10 amp=bf16");
  EXPECT_NE(b.err.find("resuming from"), std::string::npos);
  const Output md = tune(dir, kParams + " -f md" + kCommand);
  EXPECT_NE(md.out.find("**Best: `batch=512 workers=10 amp=bf16`**"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("## Pareto set"), std::string::npos);
  // Issue 44: one number per quantity. Each trial's throughput, as the text's and the
  // Markdown's rows print it, is the JSON's; "N% below the best" is its own ratio.
  const Output text = tune(dir, kParams + kCommand);
  ASSERT_EQ(text.rc, 0) << text.err;
  const double best = [&] {
    for (const auto& t : j["trials"]) {
      if (t["id"] == j["best"]) return t["throughput"].get<double>();
    }
    return 0.0;
  }();
  for (const auto& t : j["trials"]) {
    if (t["throughput"].is_null()) continue;
    const std::string id = std::to_string(t["id"].get<int>()), cfg = [&] {
      std::string c;
      for (const auto& kv : t["config"])
        c += (c.empty() ? "" : " ") + kv[0].get<std::string>() + "=" + kv[1].get<std::string>();
      return c;
    }();
    const double v = t["throughput"].get<double>();
    const std::regex text_row("\\n +" + id + "  " + cfg + " +([0-9.]+) ");
    const std::regex md_row("\\| " + id + " \\| `" + cfg + "` \\| ([0-9.]+) \\|");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text.out, m, text_row)) << id << " " << cfg << "\n" << text.out;
    EXPECT_NEAR(std::stod(m[1]), v, 0.5) << cfg;  // whole samples/s
    ASSERT_TRUE(std::regex_search(md.out, m, md_row)) << id << " " << cfg << "\n" << md.out;
    EXPECT_NEAR(std::stod(m[1]), v, 0.5) << cfg;
    if (t["id"] == j["best"]) continue;
    const std::string below = std::to_string(static_cast<int>(std::lround(100 * (1 - v / best)))) + "% below the best";
    EXPECT_NE(text.out.find(cfg + " "), std::string::npos);
    const size_t row = md.out.find("| " + id + " | `" + cfg + "`");
    EXPECT_NE(md.out.substr(row, md.out.find('\n', row) - row).find(below), std::string::npos) << below;
  }
}

TEST(TuneCli, CtrlCKeepsTheTrialsDoneAndReportsThem) {
  const std::string dir = temp_dir("interrupt");
  std::string args = kParams + kCommand + " --interval 0.05";
  args.replace(args.find("--steps 3"), 9, "--steps 400");  // 20 s a trial
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "cd " + dir + " && exec env CHOKEPOINT_NVML_LIB=/nonexistent " + kExe + " tune " + args +
                            " >stdout 2>stderr </dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  // The first trial (batch 512, off) runs out of memory at once; interrupt the second.
  const std::string trials = dir + "/chokepoint-tune/trials.jsonl";
  for (int i = 0; i < 100 && slurp(trials).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const std::string out = slurp(dir + "/stdout");
  EXPECT_NE(out.find("interrupted: the trials done are kept"), std::string::npos) << out;
  EXPECT_NE(out.find("oom"), std::string::npos);
  const std::string saved = slurp(trials);
  EXPECT_NE(saved.find("\"outcome\":\"oom\""), std::string::npos) << saved;
  EXPECT_EQ(saved.find("interrupted"), std::string::npos);  // not finished: run again on resume
}

TEST(TuneCli, ClearMessagesForBadInput) {
  const std::string dir = temp_dir("bad");
  const Output unused = tune(
      dir, "--param batch=8..64 --param lr=1,2 --metric x -- python3 " + kFake + " --batch-size {batch}");
  EXPECT_EQ(unused.rc, 2);
  EXPECT_NE(unused.err.find("--param lr is never used in the command"), std::string::npos) << unused.err;
  const Output silent = tune(dir, kParams + kCommand + " --silent");
  EXPECT_EQ(silent.rc, 1);
  EXPECT_NE(silent.out.find("printed no throughput that --metric matches"), std::string::npos) << silent.out;
  const Output regex = tune(dir, "--param batch=8..64 --metric '([' -- echo {batch}");
  EXPECT_EQ(regex.rc, 2);
  EXPECT_NE(regex.err.find("is not a regular expression"), std::string::npos) << regex.err;
}

}  // namespace
