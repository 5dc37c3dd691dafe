// Trials of a real program (tests/data/tune/fake_train.py: a model of a training job
// with a planted optimum and an out-of-memory threshold) through the runner: the printed
// throughput, out of memory, a hang killed at the timeout with its whole process group,
// an early stop, a program that prints nothing; then a search over them, resumed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tune/runner.h"
#include "tune/search.h"

namespace chokepoint::tune {
namespace {

const std::string kFake = std::string(CHOKEPOINT_TEST_DATA) + "/tune/fake_train.py";

struct RunnerTest : ::testing::Test {
  void SetUp() override {
    dir = ::testing::TempDir() + "/tune_runner_" + std::to_string(getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    setenv("CHOKEPOINT_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);  // no GPU in tests
    o.dir = dir;
    o.metric = Pattern::compile("samples/s: ([0-9.]+)").value();
    o.memory = Pattern::compile("peak_mem_mb: ([0-9.]+)").value();
    o.steps = 4;
    o.warmup = 1;
    o.gpu = false;
    o.timeout_s = 30;
  }
  std::vector<std::string> fake(const std::string& b, const std::string& w, const std::string& amp) const {
    return {"python3", kFake, "--batch-size", b, "--workers", w, "--amp", amp};
  }
  std::string dir;
  RunnerOptions o;
};

TEST(TuneRunnerUnits, ScansValuesMediansAndOutOfMemory) {
  const Pattern re = Pattern::compile("samples/s: ([0-9.]+)").value();
  EXPECT_EQ(scan_values("a samples/s: 10\nx\nsamples/s: 12.5\n", re), (std::vector<double>{10, 12.5}));
  int n = 0;
  EXPECT_EQ(*measured_median({1, 10, 30, 20}, 1, &n), 20);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(*measured_median({5}, 2), 5);  // fewer than the warm-up: all of them
  EXPECT_TRUE(says_out_of_memory("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"));
  EXPECT_TRUE(says_out_of_memory("RuntimeError: CUDA error: out of memory"));
  EXPECT_FALSE(says_out_of_memory("ValueError: bad batch size"));
}

TEST_F(RunnerTest, MeasuresThePrintedThroughputAndMemory) {
  const Trial t = run_trial(o, fake("128", "10", "bf16"), 1, std::nullopt, 128);
  EXPECT_EQ(t.outcome, Outcome::kOk) << t.note;
  ASSERT_TRUE(t.throughput);
  EXPECT_DOUBLE_EQ(*t.throughput, 4000.0);  // min(6000 * 128/192, 6000)
  EXPECT_EQ(t.measured, 4);
  EXPECT_DOUBLE_EQ(*t.peak_memory_bytes, 1280.0 * 1024 * 1024);
  EXPECT_EQ(t.memory_source, "program");
  EXPECT_TRUE(std::filesystem::exists(dir + "/trial-1/recording/meta.json"));
  EXPECT_FALSE(t.verdict.empty());
}

TEST_F(RunnerTest, OutOfMemoryFromExitStatusAndStderr) {
  const Trial t = run_trial(o, fake("512", "4", "off"), 2, std::nullopt, 512);
  EXPECT_EQ(t.outcome, Outcome::kOom);
  // Its own exit (1), or our SIGTERM when the error was read first (the next tick).
  ASSERT_TRUE(t.exit_code);
  EXPECT_TRUE(*t.exit_code == 1 || *t.exit_code == 128 + SIGTERM) << *t.exit_code;
  EXPECT_NE(t.note.find("CUDA out of memory"), std::string::npos) << t.note;
}

TEST_F(RunnerTest, OutOfMemoryStopsTheTrialOnceItIsSaid) {
  std::vector<std::string> argv = fake("1024", "16", "off");
  argv.insert(argv.end(), {"--slow-exit", "60"});
  const Trial t = run_trial(o, argv, 6, std::nullopt, 1024);
  EXPECT_EQ(t.outcome, Outcome::kOom);
  EXPECT_LT(t.seconds, 10);
  EXPECT_NE(t.note.find("CUDA out of memory"), std::string::npos) << t.note;
}

TEST_F(RunnerTest, AHangingTrialIsKilledWithItsProcessGroupAtTheTimeout) {
  // 3 s: the fake (Python) must have started and written its pid file by then; at 1 s it
  // once had not, under a parallel ctest on 2 cores.
  o.timeout_s = 3;
  std::vector<std::string> argv = fake("64", "0", "off");
  const std::string pids = dir + "/pids";
  argv.insert(argv.end(), {"--hang", "--pid-file", pids});
  const auto t0 = std::chrono::steady_clock::now();
  const Trial t = run_trial(o, argv, 3, std::nullopt, 64);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(t.outcome, Outcome::kTimeout);
  EXPECT_NE(t.note.find("killed"), std::string::npos);
  EXPECT_LT(s, 10);  // the program ignores nothing: SIGTERM ends it
  std::ifstream in(pids);
  pid_t parent = 0, child = 0;
  ASSERT_TRUE(in >> parent >> child);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_NE(::kill(child, 0), 0) << "the trial's own child (sleep) outlived it";
}

TEST_F(RunnerTest, StopsATrialClearlyWorseThanTheBest) {
  o.steps = 1000;                                                       // it would print for 20 s
  const Trial t = run_trial(o, fake("64", "1", "off"), 4, 5000.0, 64);  // ~ 492 samples/s
  EXPECT_EQ(t.outcome, Outcome::kEarlyStop) << t.note;
  EXPECT_LT(t.seconds, 5);
  EXPECT_LT(*t.throughput, 2500);
}

TEST_F(RunnerTest, AProgramThatPrintsNoThroughput) {
  std::vector<std::string> argv = fake("64", "0", "off");
  argv.push_back("--silent");
  const Trial t = run_trial(o, argv, 5, std::nullopt, 64);
  EXPECT_EQ(t.outcome, Outcome::kNoMetric);
  EXPECT_NE(t.note.find("--metric"), std::string::npos);
}

TEST_F(RunnerTest, SearchOverRealTrialsResumesFromTheTrialsFile) {
  std::vector<Param> ps;
  for (const char* p : {"batch=64..1024", "workers=0,4,8,10,12,16", "amp=off,bf16"})
    ps.push_back(parse_param(p).value());
  const Space s = make_space(ps).value();
  const std::vector<std::string> cmd = {"python3",   kFake,   "--batch-size", "{batch}",    "--workers",
                                        "{workers}", "--amp", "{amp}",        "--interval", "0.005"};
  const std::string file = dir + "/trials.jsonl";
  auto evaluate = [&](const Config& c, int id, std::optional<double> best) {
    Trial t = run_trial(o, substitute(cmd, s, c), id, best, std::stod(s.params[0].values[c[0]]));
    t.config = s.assignment(c);
    EXPECT_TRUE(append_trial(file, t).ok());
    return t;
  };
  SearchOptions capped;
  capped.max_trials = 4;
  const SearchResult a = search(s, capped, evaluate, {}, [] { return 0.0; });
  EXPECT_EQ(a.stopped, "max_trials");
  EXPECT_EQ(a.max_fit_batch, "256");  // 1024 and 512 out of memory with amp=off
  const SearchResult b = search(s, {}, evaluate, read_trials(file).value(), [] { return 0.0; });
  EXPECT_EQ(b.resumed, 4);
  ASSERT_TRUE(b.best);
  EXPECT_EQ(s.key(Config{3, 3, 1}), "batch=512 workers=10 amp=bf16");
  std::string best;
  for (const auto& [k, v] : b.trials[*b.best].config) best += (best.empty() ? "" : " ") + k + "=" + v;
  EXPECT_EQ(best, "batch=512 workers=10 amp=bf16");
  EXPECT_LE((a.run + b.run) * 3, static_cast<int>(s.grid_size()));
}

}  // namespace
}  // namespace chokepoint::tune
