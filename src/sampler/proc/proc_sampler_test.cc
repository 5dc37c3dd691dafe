// The host and process samplers replaying two captured ticks: exact rates from the
// hand-made variants (tests/data/proc/variants), the real spinning-threads tree of the
// dev VM (tests/data/proc/dev_vm), and the H200 machine's host files.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "sampler/proc/host_sampler.h"
#include "sampler/proc/process_sampler.h"
#include "sampler/proc/roles.h"

namespace chokepoint::sampler::proc {
namespace {
namespace fs = std::filesystem;
using samples::Entity;
using samples::MetricId;
using samples::ProcessRole;
using samples::Tick;
using samples::TickTime;

std::string data(const std::string& rel) { return std::string(CHOKEPOINT_TEST_DATA) + "/proc/" + rel; }

// A scratch root whose files are swapped between ticks, as /proc changes under a reader.
class Replay {
 public:
  explicit Replay(const std::string& name)
      : root_(::testing::TempDir() + "/proc_replay_" + name + "_" + std::to_string(getpid())) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~Replay() { fs::remove_all(root_); }
  void load(const std::string& fixture) {
    fs::remove_all(root_ + "/proc");
    fs::copy(data(fixture), root_, fs::copy_options::recursive);
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// The value of (metric, entity) in a tick; NaN when absent, -1 when invalid.
double find(const Tick& t, MetricId m, const Entity& e) {
  for (const auto& s : t.samples) {
    if (s.metric == m && s.entity == e) return s.valid ? s.value : -1.0;
  }
  return std::nan("");
}

constexpr int64_t kSec = 1'000'000'000;

TEST(HostSampler, ExactRatesFromTheVariants) {
  Replay r("host");
  ProcFs pfs = ProcFs::fixture(r.root());
  HostSampler host(pfs);
  r.load("variants/t0");
  Tick t0;
  host.sample({1'700'000'000 * kSec, 0}, t0);
  const Entity h = Entity::host();
  EXPECT_EQ(find(t0, MetricId::kHostProcsRunning, h), 3);
  EXPECT_EQ(find(t0, MetricId::kHostProcsBlocked, h), 1);
  EXPECT_EQ(find(t0, MetricId::kHostMemAvailableBytes, h), 8192.0 * 1024);
  EXPECT_TRUE(std::isnan(find(t0, MetricId::kHostCpuUserPct, h)));  // no rate before two ticks
  EXPECT_EQ(find(t0, MetricId::kHostPsiCpuSomeAvg10, h), -1);       // no PSI here: invalid, not 0
  EXPECT_EQ(find(t0, MetricId::kHostPsiIoFullAvg10, h), -1);
  EXPECT_EQ(host.cpu_count(), 2);
  EXPECT_EQ(host.mem_total_bytes(), 16384u * 1024);

  r.load("variants/t1");
  Tick t1;
  host.sample({1'700'000'000 * kSec + kSec / 2, kSec / 2}, t1);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCpuUserPct, h), 25.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCpuSystemPct, h), 12.5);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCpuIdlePct, h), 50.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCpuIowaitPct, h), 7.5);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCpuStealPct, h), 5.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCtxSwitchesPerS, h), 2000.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostSwapInPagesPerS, h), 10.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostSwapOutPagesPerS, h), 40.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostMajorFaultsPerS, h), 100.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostDiskReadBytesPerS, h), 1000.0 * 512 / 0.5);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostDiskWriteBytesPerS, h), 100.0 * 512 / 0.5);
}

TEST(HostSampler, DevVmAndH200) {
  Replay r("host_dev");
  ProcFs pfs = ProcFs::fixture(r.root());
  HostSampler host(pfs);
  r.load("dev_vm/t0");
  Tick t0, t1;
  host.sample({0, 0}, t0);
  r.load("dev_vm/t1");
  host.sample({kSec, kSec}, t1);
  const Entity h = Entity::host();
  // 234 user, 6 system, 1 idle ticks passed: the VM was saturated.
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCpuUserPct, h), 100.0 * 234 / 241);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCpuSystemPct, h), 100.0 * 6 / 241);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostCtxSwitchesPerS, h), 1929549.0 - 1927673.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kHostPsiCpuSomeAvg10, h), 12.31);
  EXPECT_EQ(find(t1, MetricId::kHostProcsRunning, h), 5);
  EXPECT_EQ(find(t1, MetricId::kHostDiskReadBytesPerS, h), 0.0);

  ProcFs h200 = ProcFs::fixture(data("h200"));
  HostSampler hh(h200);
  Tick t;
  hh.sample({0, 0}, t);
  EXPECT_DOUBLE_EQ(find(t, MetricId::kHostPsiIoSomeAvg10, h), 2.41);
  EXPECT_DOUBLE_EQ(find(t, MetricId::kHostPsiCpuFullAvg10, h), 0.0);
  EXPECT_EQ(find(t, MetricId::kHostMemAvailableBytes, h), 131478660.0 * 1024);
  EXPECT_EQ(hh.cpu_count(), 16);
}

ProcessSamplerOptions options(std::vector<int64_t> roots) {
  ProcessSamplerOptions o;
  o.roots = std::move(roots);
  o.clock_ticks_per_s = 100;
  o.page_size = 4096;
  o.discovery_interval_ns = 0;  // every tick
  o.thread_visits_per_tick = 64;
  return o;
}

TEST(ProcessSampler, VariantsTreeRatesAndAVanishedWorker) {
  Replay r("tree");
  ProcFs pfs = ProcFs::fixture(r.root());
  ProcessSampler ps(pfs, options({4242}));
  r.load("variants/t0");
  Tick t0;
  TreeEvents ev0;
  ps.sample({1000 * kSec, 0}, t0, &ev0);
  ASSERT_EQ(ev0.appeared.size(), 2u);  // 4242 and its worker; 999 is not ours
  EXPECT_EQ(ev0.appeared[0].pid, 4242);
  EXPECT_EQ(ev0.appeared[0].comm, "py) S 1 (x");
  EXPECT_EQ(ev0.appeared[0].role, ProcessRole::kLaunched);
  EXPECT_EQ(ev0.appeared[0].cmdline, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(ev0.appeared[1].pid, 4300);
  EXPECT_EQ(ev0.appeared[1].role, ProcessRole::kDataLoaderWorker);
  EXPECT_EQ(ps.live_pids(), (std::vector<int64_t>{4242, 4300}));
  const Entity p = Entity::process(4242);
  EXPECT_EQ(find(t0, MetricId::kProcThreads, p), 2);
  EXPECT_EQ(find(t0, MetricId::kProcRssBytes, p), 256.0 * 4096);
  EXPECT_EQ(find(t0, MetricId::kProcThreadsRunning, p), 1);  // 4243 is R
  EXPECT_EQ(find(t0, MetricId::kThreadState, Entity::thread(4242, 4243)), 'R');

  r.load("variants/t1");
  Tick t1;
  TreeEvents ev1;
  ps.sample({1000 * kSec + kSec / 2, kSec / 2}, t1, &ev1);
  EXPECT_EQ(ev1.exited, (std::vector<int64_t>{4300}));
  EXPECT_TRUE(ev1.appeared.empty());
  EXPECT_TRUE(ps.processes().at(4300).exited);
  EXPECT_EQ(ps.processes().at(4300).last_seen_ns, 1000 * kSec + kSec / 2);
  EXPECT_EQ(ps.live_pids(), (std::vector<int64_t>{4242}));
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcCpuPct, p), 100.0);  // 50 ticks in 0.5 s
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcReadBytesPerS, p), 512000.0 / 0.5);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcWriteBytesPerS, p), 4096.0 / 0.5);
  const Entity busy = Entity::thread(4242, 4243);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadCpuPct, busy), 90.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadRunqWaitNsPerS, busy), 1e8);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadCtxVoluntaryPerS, busy), 400.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadCtxInvoluntaryPerS, busy), 10.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadCpuPct, Entity::thread(4242, 4242)), 10.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcCtxVoluntaryPerS, p), 500.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcCtxInvoluntaryPerS, p), 10.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcRunqWaitNsPerS, p), 1e8);
  EXPECT_TRUE(std::isnan(find(t1, MetricId::kProcCpuPct, Entity::process(4300))));
}

// Issue 13: `watch --pid` of the shell chokepoint runs in made chokepoint (and its py-spy)
// part of the watched tree. An excluded PID is never adopted, nor are its children.
TEST(ProcessSampler, ExcludedPidAndItsChildrenAreNotAdopted) {
  Replay r("exclude");
  ProcFs pfs = ProcFs::fixture(r.root());
  ProcessSamplerOptions o = options({4242});
  o.exclude = {4300};  // stands for chokepoint, a child of the watched 4242
  ProcessSampler ps(pfs, o);
  r.load("variants/t0");
  Tick t0;
  TreeEvents ev0;
  ps.sample({1000 * kSec, 0}, t0, &ev0);
  ASSERT_EQ(ev0.appeared.size(), 1u);
  EXPECT_EQ(ev0.appeared[0].pid, 4242);
  EXPECT_EQ(ps.live_pids(), (std::vector<int64_t>{4242}));
}

TEST(ProcessSampler, UnreadableIoIsInvalidNotZero) {
  Replay r("eacces");
  ProcFs pfs = ProcFs::fixture(r.root());
  ProcessSampler ps(pfs, options({4242}));
  r.load("variants/t0");
  Tick t0, t1;
  ps.sample({0, 0}, t0);
  ps.sample({kSec, kSec}, t1);
  EXPECT_EQ(find(t1, MetricId::kProcReadBytesPerS, Entity::process(4300)), -1);  // io.errno = EACCES
  EXPECT_EQ(find(t1, MetricId::kProcWriteBytesPerS, Entity::process(4300)), -1);
  EXPECT_EQ(find(t1, MetricId::kProcReadBytesPerS, Entity::process(4242)), 0.0);
  EXPECT_EQ(find(t1, MetricId::kProcCpuPct, Entity::process(4300)), 0.0);
}

TEST(ProcessSampler, DevVmSpinningThreadsAndChild) {
  Replay r("devtree");
  ProcFs pfs = ProcFs::fixture(r.root());
  ProcessSampler ps(pfs, options({12548}));
  r.load("dev_vm/t0");
  Tick t0, t1;
  TreeEvents ev;
  ps.sample({0, 0}, t0, &ev);
  ASSERT_EQ(ev.appeared.size(), 2u);
  EXPECT_EQ(ev.appeared[1].pid, 12590);
  EXPECT_EQ(ev.appeared[1].comm, "sleep");
  EXPECT_EQ(ev.appeared[1].role, ProcessRole::kChild);
  r.load("dev_vm/t1");
  ps.sample({kSec, kSec}, t1);
  const Entity p = Entity::process(12548);
  EXPECT_EQ(find(t1, MetricId::kProcThreads, p), 4);
  // Three spinning threads: 40 + 39 + 38 ticks in 1 s on a 2-CPU VM.
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadCpuPct, Entity::thread(12548, 12591)), 40.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadCpuPct, Entity::thread(12548, 12592)), 39.0);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kThreadCpuPct, Entity::thread(12548, 12593)), 38.0);
  EXPECT_EQ(find(t1, MetricId::kProcThreadsRunning, p), 3);
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcCtxVoluntaryPerS, p), (554 - 337) + (549 - 343) + (545 - 340));
  EXPECT_DOUBLE_EQ(find(t1, MetricId::kProcRunqWaitNsPerS, p),
                   (445368719.0 - 270805095) + (478390461.0 - 269410121) + (491987037.0 - 277688897));
}

TEST(ProcessSampler, ThreadBudgetVisitsEveryThreadInRoundRobin) {
  Replay r("budget");
  ProcFs pfs = ProcFs::fixture(r.root());
  ProcessSamplerOptions o = options({12548});
  o.thread_visits_per_tick = 2;
  ProcessSampler ps(pfs, o);
  r.load("dev_vm/t0");
  std::set<int64_t> seen;
  for (int i = 0; i < 3; ++i) {  // 5 threads (4 + the child's 1), 2 per tick
    Tick t;
    ps.sample({i * kSec, i * kSec}, t);
    int visited = 0;
    for (const auto& s : t.samples) {
      if (s.metric == MetricId::kThreadState) {
        ++visited;
        seen.insert(s.entity.id);
      }
    }
    EXPECT_EQ(visited, 2);
  }
  EXPECT_EQ(seen.size(), 5u);
}

TEST(ProcessSampler, RootThatIsGoneGivesAnEmptyTree) {
  ProcFs pfs = ProcFs::fixture(data("variants/t1"));
  ProcessSampler ps(pfs, options({4300}));
  Tick t;
  ps.sample({0, 0}, t);
  EXPECT_FALSE(ps.tree_alive());
  EXPECT_TRUE(t.samples.empty());
}

TEST(Roles, TorchrunRanksAndWorkers) {
  const std::vector<std::string> agent = {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc-per-node", "2",
                                          "train.py"};
  const std::vector<std::string> agent_m = {"python", "-m", "torch.distributed.run", "train.py"};
  const std::vector<std::string> rank = {"/usr/bin/python3", "-u", "train.py"};
  EXPECT_TRUE(is_torchrun_agent(agent));
  EXPECT_TRUE(is_torchrun_agent(agent_m));
  EXPECT_TRUE(is_torchrun_agent({"torchrun", "x.py"}));
  EXPECT_FALSE(is_torchrun_agent(rank));
  EXPECT_FALSE(is_torchrun_agent({"python3", "train.py", "torchrun"}));
  EXPECT_EQ(infer_role(true, "torchrun", agent, nullptr), ProcessRole::kLaunched);
  EXPECT_EQ(infer_role(false, "python3", rank, &agent), ProcessRole::kTorchrunRank);
  EXPECT_EQ(infer_role(false, "pt_data_worker", rank, &rank), ProcessRole::kDataLoaderWorker);
  EXPECT_EQ(infer_role(false, "sh", {"sh", "-c", "nvidia-smi"}, &agent), ProcessRole::kChild);
  EXPECT_EQ(infer_role(false, "python3", rank, &rank), ProcessRole::kChild);
}

TEST(ProcessSampler, RankFromEnvironAndWorkerRenamedAfterFork) {
  Replay r("rank");
  r.load("variants/t0");
  // 4242 becomes a torchrun agent; 4300 a rank with RANK=1 that has not renamed itself.
  std::ofstream(r.root() + "/proc/4242/cmdline") << std::string("python3\0-m\0torch.distributed.run\0train.py\0", 42);
  std::ofstream(r.root() + "/proc/4300/environ") << std::string("RANK=1\0LOCAL_RANK=1\0", 20);
  ProcFs pfs = ProcFs::fixture(r.root());
  ProcessSampler ps(pfs, options({4242}));
  Tick t;
  ps.sample({0, 0}, t);
  // 4300 is "pt_data_worker" in the variant: the name wins over parentage.
  EXPECT_EQ(ps.processes().at(4300).role, ProcessRole::kDataLoaderWorker);

  Replay r2("rank2");
  r2.load("variants/t0");
  std::ofstream(r2.root() + "/proc/4242/cmdline") << std::string("python3\0-m\0torch.distributed.run\0train.py\0", 42);
  std::ofstream(r2.root() + "/proc/4300/environ") << std::string("RANK=1\0LOCAL_RANK=1\0", 20);
  std::string stat;
  {
    std::ifstream in(r2.root() + "/proc/4300/stat");
    std::getline(in, stat);
  }
  const std::string renamed = stat.replace(stat.find("pt_data_worker"), 14, "python3");
  std::ofstream(r2.root() + "/proc/4300/stat") << renamed << "\n";
  ProcFs pfs2 = ProcFs::fixture(r2.root());
  ProcessSampler ps2(pfs2, options({4242}));
  Tick t2;
  ps2.sample({0, 0}, t2);
  EXPECT_EQ(ps2.processes().at(4300).role, ProcessRole::kTorchrunRank);
  EXPECT_EQ(ps2.processes().at(4300).rank, 1);
}

// `run` often sees its command before the exec (or through a wrapper such as a pyenv
// shim): when the name changes, argv is read again and the process recorded anew.
TEST(ProcessSampler, ExecAfterDiscoveryUpdatesNameArgvAndRole) {
  Replay r("exec");
  r.load("variants/t0");
  std::string stat;
  {
    std::ifstream in(r.root() + "/proc/4242/stat");
    std::getline(in, stat);
  }
  const size_t open = stat.find('('), close = stat.rfind(')');  // comm may hold parentheses
  const std::string real_name = stat.substr(open + 1, close - open - 1);
  std::ofstream(r.root() + "/proc/4242/stat") << stat.substr(0, open + 1) + "chokepoint" + stat.substr(close) << "\n";
  std::ofstream(r.root() + "/proc/4242/cmdline") << std::string("chokepoint\0run\0--\0torchrun\0", 27);
  ProcFs pfs = ProcFs::fixture(r.root());
  ProcessSampler ps(pfs, options({4242}));
  Tick t0;
  ps.sample({0, 0}, t0);
  EXPECT_EQ(ps.processes().at(4242).comm, "chokepoint");
  // The exec: the real name and argv (a torchrun agent).
  std::ofstream(r.root() + "/proc/4242/stat") << stat << "\n";
  std::ofstream(r.root() + "/proc/4242/cmdline") << std::string("python3\0-m\0torch.distributed.run\0train.py\0", 42);
  Tick t1;
  TreeEvents ev;
  ps.sample({kSec, kSec}, t1, &ev);
  const auto& m = ps.processes().at(4242);
  EXPECT_EQ(m.comm, real_name);
  ASSERT_EQ(m.cmdline.size(), 4u);
  EXPECT_EQ(m.cmdline[2], "torch.distributed.run");
  EXPECT_EQ(m.role, ProcessRole::kLaunched);
  ASSERT_FALSE(ev.appeared.empty());
  EXPECT_EQ(ev.appeared.front().pid, 4242);
}

}  // namespace
}  // namespace chokepoint::sampler::proc
