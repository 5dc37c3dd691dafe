// The search over a model of a job (the same as tests/data/tune/fake_train.py): a planted
// optimum (amp=bf16, workers=10, the largest batch that fits) and an out-of-memory
// threshold; the space's parsing, the trials file, the Pareto front.
#include <gtest/gtest.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tune/search.h"
#include "tune/space.h"
#include "tune/trial.h"

namespace chokepoint::tune {
namespace {

double model(double b, double w, const std::string& amp) {
  const double g = 3000.0 * (amp == "bf16" ? 2 : 1) * b / (b + 64);
  const double loader = w == 0 ? 200.0 : 600.0 * std::min(w, 10.0) - 150.0 * std::max(0.0, w - 10);
  return std::min(g, loader) * (1 - 0.02 * std::abs(w - 10));
}

Space brief_space() {
  std::vector<Param> ps;
  for (const char* t : {"batch=8..1024", "workers=0..16", "amp=off,bf16"}) ps.push_back(parse_param(t).value());
  return make_space(ps).value();
}

// Runs the model instead of a program: values by name, OOM above 5120 MiB.
struct ModelJob {
  const Space& s;
  int calls = 0;
  Trial operator()(const Config& c, int id, std::optional<double>) {
    ++calls;
    Trial t;
    t.id = id;
    const double b = std::stod(s.params[0].values[c[0]]), w = std::stod(s.params[1].values[c[1]]);
    const std::string amp = s.params[2].values[c[2]];
    const double mem = b * (amp == "bf16" ? 1 : 2) * 10;
    if (mem > 5120) {
      t.outcome = Outcome::kOom;
      t.note = "out of memory";
      return t;
    }
    t.outcome = Outcome::kOk;
    t.throughput = model(b, w, amp);
    t.peak_memory_bytes = mem * 1024 * 1024;
    return t;
  }
};

double no_clock() { return 0; }

TEST(TuneSpace, ParsesRangesListsAndPowersOfTwo) {
  const Space s = brief_space();
  EXPECT_EQ(s.params[0].values, (std::vector<std::string>{"8", "16", "32", "64", "128", "256", "512", "1024"}));
  EXPECT_EQ(s.params[1].values.size(), 17u);
  EXPECT_TRUE(s.params[1].ordered);
  EXPECT_FALSE(s.params[2].ordered);
  EXPECT_EQ(s.batch, 0u);
  EXPECT_EQ(s.grid_size(), 272u);
  EXPECT_EQ(parse_param("w=0..16:4")->values, (std::vector<std::string>{"0", "4", "8", "12", "16"}));
  EXPECT_FALSE(parse_param("batch").ok());
  EXPECT_FALSE(parse_param("batch=9..3").ok());
  EXPECT_FALSE(parse_param("a=x,,y").ok());
  EXPECT_FALSE(make_space({parse_param("a=1").value(), parse_param("a=2").value()}).ok());
}

TEST(TuneSpace, SubstitutesPlaceholdersAndChecksTheCommand) {
  const Space s = brief_space();
  const std::vector<std::string> cmd = {"python", "train.py", "--batch-size", "{batch}", "--workers={workers}",
                                        "--amp",  "{amp}"};
  const Config c = {3, 10, 1};
  EXPECT_EQ(substitute(cmd, s, c),
            (std::vector<std::string>{"python", "train.py", "--batch-size", "64", "--workers=10", "--amp", "bf16"}));
  EXPECT_EQ(s.key(c), "batch=64 workers=10 amp=bf16");
  EXPECT_TRUE(check_command(cmd, s).ok());
  const Status missing = check_command({"python", "train.py", "{batch}", "{amp}"}, s);
  EXPECT_NE(missing.message().find("--param workers is never used"), std::string::npos) << missing.message();
}

TEST(TuneSearch, FindsThePlantedOptimumWithFarFewerTrialsThanTheGrid) {
  const Space s = brief_space();
  ModelJob job{s};
  const SearchResult r = search(s, {}, std::ref(job), {}, no_clock);
  ASSERT_TRUE(r.best);
  const Trial& best = r.trials[*r.best];
  EXPECT_EQ(best.config,
            (std::vector<std::pair<std::string, std::string>>{{"batch", "512"}, {"workers", "10"}, {"amp", "bf16"}}));
  EXPECT_NEAR(*best.throughput, model(512, 10, "bf16"), 1e-9);
  EXPECT_EQ(r.stopped, "");
  EXPECT_EQ(r.run, job.calls);
  EXPECT_LE(r.run * 3, 272) << r.run << " trials";
  EXPECT_EQ(r.run, 21);  // this strategy on this model: 8% of the grid
  // The batch limit at the best's other values (bf16): 512 fits, 1024 does not (with
  // amp=off, where the batch search started, 512 did not either).
  EXPECT_EQ(r.max_fit_batch, "512");
  EXPECT_EQ(r.oom_batch, "1024");
}

TEST(TuneSearch, GridRunsEveryConfigurationAndAgrees) {
  const Space s = brief_space();
  ModelJob job{s};
  SearchOptions o;
  o.grid = true;
  const SearchResult r = search(s, o, std::ref(job), {}, no_clock);
  EXPECT_EQ(r.run, 272);
  ASSERT_TRUE(r.best);
  EXPECT_NEAR(*r.trials[*r.best].throughput, model(512, 10, "bf16"), 1e-9);
}

TEST(TuneSearch, ResumesWithoutRerunningFinishedTrials) {
  const Space s = brief_space();
  ModelJob first{s};
  SearchOptions capped;
  capped.max_trials = 5;
  const SearchResult a = search(s, capped, std::ref(first), {}, no_clock);
  EXPECT_EQ(a.stopped, "max_trials");
  ASSERT_EQ(a.run, 5);
  std::vector<Trial> saved = a.trials;
  for (Trial& t : saved) t.resumed = true;
  ModelJob second{s};
  const SearchResult b = search(s, {}, std::ref(second), saved, no_clock);
  EXPECT_EQ(b.resumed, 5);
  ModelJob fresh{s};
  const SearchResult c = search(s, {}, std::ref(fresh), {}, no_clock);
  EXPECT_EQ(second.calls + 5, fresh.calls);  // the same search, minus what was done
  EXPECT_EQ(b.trials[*b.best].config, c.trials[*c.best].config);
  EXPECT_GT(b.trials[5].id, 5);  // ids go on from the file's
}

TEST(TuneSearch, StopsAtTheBudgetAndWhenNothingIsMeasured) {
  const Space s = brief_space();
  ModelJob job{s};
  double t = 0;
  SearchOptions o;
  o.budget_s = 30;
  auto clock = [&] { return t; };
  auto ten_seconds = [&](const Config& c, int id, std::optional<double> best) {
    t += 10;
    return job(c, id, best);
  };
  const SearchResult r = search(s, o, ten_seconds, {}, clock);
  EXPECT_EQ(r.stopped, "budget");
  EXPECT_EQ(r.run, 3);
  auto silent = [](const Config&, int id, std::optional<double>) {
    Trial tr;
    tr.id = id;
    tr.outcome = Outcome::kNoMetric;
    return tr;
  };
  const SearchResult n = search(s, {}, silent, {}, no_clock);
  EXPECT_EQ(n.stopped, "no_metric");
  EXPECT_EQ(n.run, 1);
  auto interrupted = [&](const Config& c, int id, std::optional<double> best) {
    Trial tr = job(c, id, best);
    if (id == 2) tr.outcome = Outcome::kInterrupted;
    return tr;
  };
  const SearchResult i = search(s, {}, interrupted, {}, no_clock);
  EXPECT_EQ(i.stopped, "interrupted");
  EXPECT_EQ(i.run, 2);
}

TEST(TuneSearch, ParetoFrontOfThroughputAgainstMemory) {
  std::vector<Trial> ts(4);
  const double mib = 1024 * 1024;
  ts[0].outcome = ts[1].outcome = ts[2].outcome = Outcome::kOk;
  ts[0].throughput = 100, ts[0].peak_memory_bytes = 10 * mib;
  ts[1].throughput = 90, ts[1].peak_memory_bytes = 20 * mib;  // dominated by 0
  ts[2].throughput = 200, ts[2].peak_memory_bytes = 40 * mib;
  ts[3].outcome = Outcome::kOom;
  EXPECT_EQ(pareto_front(ts), (std::vector<size_t>{0, 2}));
}

TEST(TuneTrials, RoundTripThroughTheTrialsFile) {
  const std::string path = ::testing::TempDir() + "/tune_trials_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  Trial t;
  t.id = 7;
  t.config = {{"batch", "64"}, {"amp", "bf16"}};
  t.outcome = Outcome::kEarlyStop;
  t.throughput = 1234.5;
  t.measured = 3;
  t.peak_memory_bytes = 1e9;
  t.exit_code = 143;
  t.verdict = "input";
  t.note = "stopped early";
  ASSERT_TRUE(append_trial(path, t).ok());
  {
    FILE* f = std::fopen(path.c_str(), "a");
    std::fputs("{\"config\": [[\"batch\", \"6\n", f);  // a line cut by a kill
    std::fclose(f);
  }
  int bad = 0;
  auto back = read_trials(path, &bad);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(bad, 1);
  const Trial& r = back->front();
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.config, t.config);
  EXPECT_EQ(r.outcome, Outcome::kEarlyStop);
  EXPECT_EQ(*r.throughput, 1234.5);
  EXPECT_EQ(*r.exit_code, 143);
  EXPECT_EQ(r.verdict, "input");
  EXPECT_TRUE(r.resumed);
  EXPECT_TRUE(read_trials(path + ".missing")->empty());
}

TEST(TuneTrials, ALinkPlantedAtTheTrialsFileIsRefusedNotWrittenThrough) {
  const std::string dir = ::testing::TempDir() + "/tune_link_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string victim = dir + "/victim.txt";
  { std::ofstream(victim) << "precious\n"; }
  std::filesystem::create_symlink(victim, dir + "/trials.jsonl");
  Trial t;
  t.id = 1;
  const Status s = append_trial(dir + "/trials.jsonl", t);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot append to"), std::string::npos) << s.message();
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace chokepoint::tune
