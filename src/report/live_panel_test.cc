#include "report/live_panel.h"

#include <gtest/gtest.h>

#include "base/terminal_text.h"

namespace chokepoint::report {
namespace {

using live::Latest;
using samples::Entity;
using samples::MetricId;

RenderOptions width(int w) {
  RenderOptions o;
  o.width = w;
  return o;
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
    for (const auto& l : render_live_panel(in, width(w), 12)) {
      EXPECT_LE(display_columns(l), static_cast<size_t>(w)) << l;
      EXPECT_EQ(escape_controls(l), l) << "cut inside a character at width " << w << ": " << l;
    }
  }
}

TEST(LiveView, PanelShowsTheSignalsAndDashesForMissingOnes) {
  const PanelInput input;
  const ViewInput in = input.view();
  const auto lines = render_live_panel(in, width(200), 12);
  ASSERT_GE(lines.size(), 5u);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  for (const char* want : {"SM  95%", "DRAM   -", "691/700 W", "[sw_power_cap]", "rx 1.2 GB/s",
                           "Gen5 x16 (max Gen5 x16, 63 GB/s)", "main 98%", "loader workers 1 = 95%"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << " in\n" << all;
  }
  expect_cut_by_columns(in);
  EXPECT_LE(render_live_panel(in, width(200), 4).size(), 4u);

  const std::string line = render_live_line(in);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("GPU0 SM 95% tensor 92%"), std::string::npos) << line;
}

// The verdict so far (MonitorOptions::live_verdict) under the header, and in the line.
TEST(LiveView, TheVerdictSoFarIsShown) {
  const PanelInput input;
  ViewInput in = input.view();
  EXPECT_EQ(render_live_panel(in, width(200), 12)[1].find("verdict"), std::string::npos);
  in.verdict = "input: input-pipeline-stall -> dataloader-workers (3.20x)";
  const auto lines = render_live_panel(in, width(200), 12);
  EXPECT_EQ(lines[1], "verdict so far: input: input-pipeline-stall -> dataloader-workers (3.20x)");
  EXPECT_NE(render_live_line(in).find("| verdict so far: input: input-pipeline-stall"), std::string::npos);
  expect_cut_by_columns(in);
}

TEST(LiveView, RatesReadAsPeopleSayThem) {
  EXPECT_EQ(format_rate(std::nullopt), "-");
  EXPECT_EQ(format_rate(5.5e10), "55.0 GB/s");
  EXPECT_EQ(format_rate(8.5e8), "850 MB/s");
  EXPECT_EQ(format_rate(12e3), "12 kB/s");
}

}  // namespace
}  // namespace chokepoint::report
