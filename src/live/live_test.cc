#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "base/terminal_text.h"
#include "live/child.h"
#include "live/live_view.h"
#include "live/session.h"
#include "samples/recording_reader.h"

namespace chokepoint::live {
namespace {

namespace fs = std::filesystem;
using samples::Entity;
using samples::MetricId;

std::string data(const std::string& rel) { return std::string(CHOKEPOINT_TEST_DATA) + "/" + rel; }

TEST(Child, ReportsExitCodesTheWayAShellDoes) {
  auto ok = Child::spawn({"true"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().wait(), 0);
  auto three = Child::spawn({"sh", "-c", "exit 3"});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three.value().wait(), 3);
  auto killed = Child::spawn({"sleep", "10"});
  ASSERT_TRUE(killed.ok());
  killed.value().signal(SIGTERM);
  EXPECT_EQ(killed.value().wait(), 128 + SIGTERM);
  EXPECT_TRUE(killed.value().poll().has_value());
}

TEST(Child, ExecFailureIsAStatusNotAChild) {
  auto r = Child::spawn({"/nonexistent/command"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot run '/nonexistent/command'"), std::string::npos) << r.status().message();
  EXPECT_FALSE(Child::spawn({}).ok());
}

TEST(Session, TicksAFixtureIntoARecordingThatReadsBack) {
  const std::string root = ::testing::TempDir() + "/session_root_" + std::to_string(getpid());
  fs::remove_all(root);
  fs::copy(data("proc/dev_vm/t0"), root, fs::copy_options::recursive);
  const std::string dir = ::testing::TempDir() + "/session_rec_" + std::to_string(getpid());
  fs::remove_all(dir);
  SessionOptions o;
  o.out_dir = dir;
  o.gpu = false;
  o.proc_root = root;
  auto s = Session::start(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s.value()->add_root(12548).ok());
  EXPECT_EQ(s.value()->gpu_unavailable(), "GPU sampling turned off (--no-gpu)");
  samples::TickTime t{1'700'000'000'000'000'000, 1'000'000'000};
  ASSERT_TRUE(s.value()->tick(t).ok());
  // The same files a second later: rates become zero, levels stay.
  t.realtime_ns += 1'000'000'000;
  t.monotonic_ns += 1'000'000'000;
  ASSERT_TRUE(s.value()->tick(t).ok());
  EXPECT_EQ(s.value()->ticks(), 2);
  EXPECT_TRUE(s.value()->latest().get(MetricId::kHostProcsRunning, Entity::host()).has_value());
  EXPECT_EQ(s.value()->processes().size(), 2u) << "root 12548 and its child 12590";
  ASSERT_TRUE(s.value()->finish(0).ok());

  auto rec = samples::read_recording(dir);
  ASSERT_TRUE(rec.ok());
  EXPECT_TRUE(rec.value().complete);
  EXPECT_EQ(rec.value().ticks, 2u);
  EXPECT_EQ(rec.value().meta.exit_code, 0);
  EXPECT_EQ(rec.value().meta.pid, 12548);
  EXPECT_EQ(rec.value().meta.processes.size(), 2u);
  EXPECT_EQ(rec.value().meta.gpu_unavailable, "GPU sampling turned off (--no-gpu)");
  fs::remove_all(root);
  fs::remove_all(dir);
}

// What the panel is drawn from: one H200 at work, a main process and a loader worker.
struct PanelInput {
  samples::RunMeta meta;
  Latest latest;
  std::map<int64_t, samples::ProcessMeta> procs;

  PanelInput() {
    samples::GpuMeta g;
    g.index = 0;
    g.name = "NVIDIA H200";
    g.used = true;
    meta.gpus.push_back(g);
    const Entity g0 = Entity::gpu(0);
    put(MetricId::kGpuSmActive, g0, 94.6);
    put(MetricId::kGpuTensorActive, g0, 91.8);
    put(MetricId::kGpuUtilization, g0, 100);
    put(MetricId::kGpuDramActive, g0, 0, false);  // NOT_SUPPORTED: a dash, never 0
    put(MetricId::kGpuPowerW, g0, 691);
    put(MetricId::kGpuPowerLimitW, g0, 700);
    put(MetricId::kGpuClockEventReasons, g0, 0x4);
    put(MetricId::kGpuPcieLinkGen, g0, 5);
    put(MetricId::kGpuPcieLinkWidth, g0, 16);
    put(MetricId::kGpuPcieLinkGenMax, g0, 5);
    put(MetricId::kGpuPcieLinkWidthMax, g0, 16);
    put(MetricId::kGpuPcieRxBytesPerS, g0, 1.25e9);
    put(MetricId::kHostCpuUserPct, Entity::host(), 45);
    put(MetricId::kHostProcsRunning, Entity::host(), 3);
    samples::ProcessMeta main;
    main.pid = 4242;
    main.comm = "python";
    main.role = samples::ProcessRole::kLaunched;
    procs[4242] = main;
    samples::ProcessMeta worker = main;
    worker.pid = 4300;
    worker.comm = "pt_data_worker";
    worker.role = samples::ProcessRole::kDataLoaderWorker;
    procs[4300] = worker;
    put(MetricId::kProcCpuPct, Entity::process(4242), 98);
    put(MetricId::kProcCpuPct, Entity::process(4300), 95);
  }

  void put(MetricId m, const Entity& e, double v, bool valid = true) {
    latest.values[Latest::Key{m, e}] = samples::Sample{m, e, v, valid};
  }

  ViewInput view() const {
    ViewInput in;
    in.elapsed_s = 12.3;
    in.title = "python train.py";
    in.dir = "rec";
    in.meta = &meta;
    in.latest = &latest;
    in.processes = &procs;
    in.cpus = 16;
    return in;
  }
};

// Cut to the terminal's columns, never inside a character (issue 13: a cut by bytes split
// the two-byte "·"): at every width each line is valid UTF-8 that fits.
void expect_cut_by_columns(const ViewInput& in) {
  for (int w = 8; w <= 80; ++w) {
    for (const auto& l : render_panel(in, w, 12)) {
      EXPECT_LE(display_columns(l), static_cast<size_t>(w)) << l;
      EXPECT_EQ(escape_controls(l), l) << "cut inside a character at width " << w << ": " << l;
    }
  }
}

TEST(LiveView, PanelShowsTheSignalsAndDashesForMissingOnes) {
  const PanelInput input;
  const ViewInput in = input.view();
  const auto lines = render_panel(in, 200, 12);
  ASSERT_GE(lines.size(), 5u);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  for (const char* want : {"SM  95%", "DRAM   -", "691/700 W", "[sw_power_cap]", "rx 1.2 GB/s",
                           "Gen5 x16 (max Gen5 x16, 63 GB/s)", "main 98%", "loader workers 1 = 95%"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << " in\n" << all;
  }
  expect_cut_by_columns(in);
  EXPECT_LE(render_panel(in, 200, 4).size(), 4u);

  const std::string line = render_line(in);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("GPU0 SM 95% tensor 92%"), std::string::npos) << line;
}

TEST(LiveView, RatesReadAsPeopleSayThem) {
  EXPECT_EQ(format_rate(std::nullopt), "-");
  EXPECT_EQ(format_rate(5.5e10), "55.0 GB/s");
  EXPECT_EQ(format_rate(8.5e8), "850 MB/s");
  EXPECT_EQ(format_rate(12e3), "12 kB/s");
}

}  // namespace
}  // namespace chokepoint::live
