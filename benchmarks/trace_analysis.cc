// Cost of the trace path of `run --trace` on long runs (docs/BENCHMARKS.md, "Step
// inference and the trace path"): a real CUPTI trace (launch_bound, 120 tiny kernels a
// step, traced on the H200: tests/data/tracer/steps/launch_bound.cptrace.gz) repeated
// end to end until the timeline holds N GPU ops, then step inference alone, every
// analysis (inference included), and the Chrome export into a discarding stream.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <ostream>
#include <streambuf>
#include <string>

#include "analyses/analysis.h"
#include "analyses/step_inference.h"
#include "exporters/chrome_trace.h"
#include "importers/importer.h"
#include "timeline/import_stats.h"

namespace {

using namespace chokepoint;

// The fixture repeated `copies` times, each copy shifted past the previous one's end.
const timeline::Timeline& repeated(int copies) {
  static std::map<int, timeline::Timeline> cache;
  auto it = cache.find(copies);
  if (it != cache.end()) return it->second;
  timeline::Timeline one;
  timeline::ImportStats stats;
  const std::string path = std::string(CHOKEPOINT_SOURCE_DIR) + "/tests/data/tracer/steps/launch_bound.cptrace.gz";
  if (!importers::import_paths({path}, one, stats).ok()) std::abort();
  timeline::Timeline& tl = cache[copies];
  tl.sources = one.sources;
  tl.devices = one.devices;
  const timeline::TimeNs span = one.gpu_ops.end.back() - one.gpu_ops.start.front() + 1'000'000;
  auto& g = tl.gpu_ops;
  auto& c = tl.runtime_calls;
  for (int k = 0; k < copies; ++k) {
    const timeline::TimeNs dt = span * k;
    const int64_t dc = int64_t{k} << 32;
    const auto& og = one.gpu_ops;
    for (size_t i = 0; i < og.size(); ++i) {
      g.kind.push_back(og.kind[i]);
      g.device.push_back(og.device[i]);
      g.stream.push_back(og.stream[i]);
      g.start.push_back(og.start[i] + dt);
      g.end.push_back(og.end[i] + dt);
      g.name.push_back(tl.strings.intern(one.strings.view(og.name[i])));
      g.correlation.push_back(og.correlation[i] + dc);
      g.external_id.push_back(-1);
      g.grid.push_back(og.grid[i]);
      g.block.push_back(og.block[i]);
      g.registers.push_back(og.registers[i]);
      g.shared_mem.push_back(og.shared_mem[i]);
      g.occupancy_pct.push_back(og.occupancy_pct[i]);
      g.bytes.push_back(og.bytes[i]);
      g.copy_kind.push_back(og.copy_kind[i]);
      g.src_kind.push_back(og.src_kind[i]);
      g.dst_kind.push_back(og.dst_kind[i]);
    }
    const auto& oc = one.runtime_calls;
    for (size_t i = 0; i < oc.size(); ++i) {
      c.pid.push_back(oc.pid[i]);
      c.tid.push_back(oc.tid[i]);
      c.api.push_back(oc.api[i]);
      c.name.push_back(tl.strings.intern(one.strings.view(oc.name[i])));
      c.start.push_back(oc.start[i] + dt);
      c.end.push_back(oc.end[i] + dt);
      c.correlation.push_back(oc.correlation[i] + dc);
      c.external_id.push_back(-1);
      c.cbid.push_back(oc.cbid[i]);
    }
  }
  tl.finalize();
  return tl;
}

void BM_StepInference(benchmark::State& state) {
  const auto& tl = repeated(static_cast<int>(state.range(0)));
  const auto ix = analyses::build_index(tl);
  for (auto _ : state) {
    auto s = analyses::infer_steps(tl, ix);
    benchmark::DoNotOptimize(s);
  }
  state.counters["gpu_ops"] = static_cast<double>(tl.gpu_ops.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(tl.gpu_ops.size()));
}

void BM_AnalyzeTrace(benchmark::State& state) {
  const auto& tl = repeated(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto a = analyses::analyze(tl);
    benchmark::DoNotOptimize(a);
  }
  state.counters["gpu_ops"] = static_cast<double>(tl.gpu_ops.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(tl.gpu_ops.size()));
}

struct Discard : std::streambuf {
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int overflow(int c) override { return c; }
};

void BM_ChromeExport(benchmark::State& state) {
  const auto& tl = repeated(static_cast<int>(state.range(0)));
  Discard sink;
  std::ostream out(&sink);
  for (auto _ : state) {
    if (!exporters::write_chrome_trace(tl, nullptr, nullptr, out).ok()) state.SkipWithError("export failed");
  }
  state.counters["events"] = static_cast<double>(tl.gpu_ops.size() + tl.runtime_calls.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(tl.gpu_ops.size() + tl.runtime_calls.size()));
}

// Importing the same records (input_bound, traced on the H200) from the tracer's .cptrace
// and from an nsys SQLite export of them (tests/data/nsys/cptrace_to_nsys.py), both gzipped.
void BM_Import(benchmark::State& state, const char* file) {
  const std::string path = std::string(CHOKEPOINT_SOURCE_DIR) + "/tests/data/" + file;
  size_t events = 0;
  for (auto _ : state) {
    timeline::Timeline tl;
    timeline::ImportStats stats;
    if (!importers::import_paths({path}, tl, stats).ok()) state.SkipWithError("import failed");
    events = tl.event_count();
  }
  state.counters["events"] = static_cast<double>(events);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(events));
}
BENCHMARK_CAPTURE(BM_Import, cptrace, "tracer/steps/input_bound.cptrace.gz")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Import, nsys, "nsys/input_bound.sqlite.gz")->Unit(benchmark::kMillisecond);

// 1 copy: 23.5 k GPU ops (10 s of launch_bound); 43: 1 M; 430: 10 M.
BENCHMARK(BM_StepInference)->Arg(1)->Arg(43)->Arg(430)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeTrace)->Arg(1)->Arg(43)->Arg(430)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChromeExport)->Arg(1)->Arg(43)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
