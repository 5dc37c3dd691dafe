#include "importers/kineto/kineto_importer.h"

#include <string>
#include <unordered_set>

#include "importers/json/structural_scanner.h"
#include "importers/kineto/event_mapper.h"
#include "importers/kineto/kineto_stats.h"
#include "importers/kineto/trace_reader.h"

namespace chokepoint::importers {
namespace {

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

class KinetoImporter final : public Importer {
 public:
  std::string_view name() const override { return "kineto"; }
  std::string_view description() const override { return "PyTorch profiler Chrome-trace JSON, .json or .json.gz"; }
  // Covers Kineto's own *.pt.trace.json[.gz].
  std::vector<std::string_view> file_suffixes() const override { return {".json", ".json.gz"}; }
  bool sniff(std::string_view head) const override { return sniff_kineto(head); }
  Status import(const std::string& path, int32_t source_index, timeline::Timeline& tl, timeline::ImportStats& stats,
                const ImportOptions& opts) override {
    Result<std::unique_ptr<ByteSource>> in = open_file(path);
    if (!in.ok()) return in.status();
    return import_kineto(*in.value(), source_index, tl, stats, opts);
  }
};

// A file cut inside its events keeps what was written before the cut; the order is
// torch.profiler's, not time's. Where the cut took the CUDA calls that launched the GPU
// work left (healthy_bf16's gzip cut at 60,000 bytes: 24 of 25 GPU ops without their call,
// read as 3 steps of 0.03 ms, "memory bound"), the steps cannot be rebuilt: those ops are
// lost data, and past a share of them no verdict is made (rules/diagnose.cc). A cut that
// took only some of the last events (input_bound at 90%) keeps its verdict.
void count_orphaned_ops(const timeline::Timeline& tl, size_t calls_from, size_t ops_from,
                        timeline::ImportStats& stats) {
  std::unordered_set<int64_t> called;
  for (size_t i = calls_from; i < tl.runtime_calls.size(); ++i) called.insert(tl.runtime_calls.correlation[i]);
  int64_t orphans = 0;
  for (size_t i = ops_from; i < tl.gpu_ops.size(); ++i) {
    if (!called.contains(tl.gpu_ops.correlation[i])) ++orphans;
  }
  stats.lost("GPU ops whose launching call the cut-off trace lost", orphans,
             static_cast<int64_t>(tl.gpu_ops.size() - ops_from));
}

}  // namespace

std::unique_ptr<Importer> make_kineto_importer() { return std::make_unique<KinetoImporter>(); }

bool sniff_kineto(std::string_view head) {
  size_t p = head.substr(0, 3) == "\xef\xbb\xbf" ? 3 : 0;
  while (p < head.size() && json::is_json_space(head[p])) ++p;
  if (p >= head.size()) return false;
  if (head[p] == '{') {
    if (contains(head, "\"traceEvents\"")) return true;
    if (contains(head, "\"schemaVersion\"") &&
        (contains(head, "\"deviceProperties\"") || contains(head, "\"baseTimeNanoseconds\"") ||
         contains(head, "\"distributedInfo\""))) {
      return true;
    }
    return contains(head, "\"ph\"");
  }
  if (head[p] == '[') {
    ++p;
    while (p < head.size() && json::is_json_space(head[p])) ++p;
    return p < head.size() && head[p] == '{' && contains(head, "\"ph\"");
  }
  return false;
}

Status import_kineto(ByteSource& in, int32_t source_index, timeline::Timeline& tl, timeline::ImportStats& stats,
                     const ImportOptions& opts, const KinetoLimits& limits) {
  if (source_index < 0 || static_cast<size_t>(source_index) >= tl.sources.size()) {
    return Status::Error(ErrorCode::kInternal,
                         "internal: source " + std::to_string(source_index) + " was not added to the timeline");
  }
  kineto::StatCounter counter;
  const size_t calls_before = tl.runtime_calls.size(), ops_before = tl.gpu_ops.size();
  kineto::EventMapper mapper(tl, source_index, counter);
  kineto::TraceMetadata meta;
  kineto::TraceReader reader(in, limits, opts, counter);
  Status st = reader.run(mapper, meta);
  if (!st.ok()) return st;
  mapper.finish(meta);
  counter.flush_to(stats);
  stats.lost("GPU events with a negative or missing duration", mapper.gpu_events_without_duration(),
             mapper.gpu_events());
  if (counter.count(kineto::Stat::kEventsCut) > 0) count_orphaned_ops(tl, calls_before, ops_before, stats);
  return Status::Ok();
}

Status import_kineto_buffer(std::string_view bytes, int32_t source_index, timeline::Timeline& tl,
                            timeline::ImportStats& stats, const KinetoLimits& limits) {
  if (source_index >= 0 && static_cast<size_t>(source_index) == tl.sources.size()) {
    timeline::Source src;
    src.path = "<memory>";
    src.format = "kineto";
    tl.sources.push_back(src);
  }
  std::unique_ptr<ByteSource> in = open_memory(bytes);
  return import_kineto(*in, source_index, tl, stats, {}, limits);
}

}  // namespace chokepoint::importers
