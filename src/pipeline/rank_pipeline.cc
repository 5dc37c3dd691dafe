#include "pipeline/rank_pipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "analyses/analysis.h"
#include "analyses/distributed/cross_rank.h"
#include "pipeline/build_report.h"
#include "pipeline/machine_context.h"
#include "rules/diagnose.h"

namespace chokepoint::pipeline {
namespace {

namespace dist = analyses::distributed;

// One rank's files imported into a timeline of their own (sniffed from `heads`, the input
// plan's, when given); a recording's CUPTI traces get the rank their process had.
Status import_rank(const RankInput& r, const std::map<std::string, std::string>* heads, timeline::Timeline& tl,
                   timeline::ImportStats& stats) {
  Status s = importers::import_paths(r.files, tl, stats, {.heads = heads});
  if (!s.ok()) return s;
  for (auto& src : tl.sources) {
    if (src.rank < 0) src.rank = r.rank;
  }
  return s;
}

struct RankResult {
  dist::RankSummary summary;
  Status status;
  timeline::ImportStats stats;
};

// Imports, analyzes and summarizes one rank; its timeline is gone when this returns.
RankResult summarize(const RankInput& r, const std::map<std::string, std::string>* heads, const AnalyzeOptions& ao,
                     std::mutex& ctx_mutex) {
  RankResult out;
  timeline::Timeline tl;
  out.status = import_rank(r, heads, tl, out.stats);
  if (!out.status.ok()) return out;
  Result<machine::MachineContext> ctx = Status::Error("unresolved");
  {
    // Saved profiles are files: resolved one rank at a time.
    std::lock_guard<std::mutex> lock(ctx_mutex);
    ctx = resolve_machine_context(analyses::device_specs(tl), ao.ceilings);
  }
  if (!ctx.ok()) {
    out.status = ctx.status();
    return out;
  }
  // The breakdown is all a summary needs: no what-if replays per rank.
  const analyses::Analysis a = analyses::analyze(tl, ctx.value(), /*what_ifs=*/false);
  out.summary = dist::summarize_rank(tl, a);
  out.summary.rank = r.rank;
  out.summary.domain = r.domain;
  out.summary.path = r.files.size() == 1 ? r.files.front()
                                         : r.files.front() + " (+" + std::to_string(r.files.size() - 1) + ")";
  out.summary.bound = rules::category_name(rules::diagnose(tl, a).bound);
  return out;
}

}  // namespace

Result<report::Report> analyze_rank_inputs(const std::vector<RankInput>& ranks, const std::vector<std::string>& paths,
                                           const importers::ImportOptions& io, const AnalyzeOptions& ao, int workers) {
  const auto t0 = std::chrono::steady_clock::now();
  if (workers <= 0) workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers = std::min<int>(workers, static_cast<int>(ranks.size()));
  std::vector<RankResult> results(ranks.size());
  std::atomic<size_t> next{0}, done{0};
  std::mutex ctx_mutex;
  auto work = [&] {
    for (size_t i = next++; i < ranks.size(); i = next++) {
      results[i] = summarize(ranks[i], io.heads, ao, ctx_mutex);
      const size_t d = ++done;
      if (io.progress != nullptr && workers == 1) io.progress(io.progress_ctx, d, ranks.size());
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  std::vector<dist::RankSummary> summaries;
  timeline::ImportStats stats;
  std::string by_device;
  for (const RankInput& ri : ranks) {
    if (!ri.by_device.empty())
      by_device += (by_device.empty() ? "" : "; ") + ("rank " + std::to_string(ri.rank) + ": " + ri.by_device);
  }
  if (!by_device.empty()) stats.add(StatId::kImportRanksByDevice, by_device, static_cast<int64_t>(ranks.size()));
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].status.ok()) {
      return Status::Error(ErrorCode::kInput,
                           "rank " + std::to_string(ranks[i].rank) + ": " + results[i].status.message());
    }
    stats.merge(results[i].stats);
    summaries.push_back(std::move(results[i].summary));
  }
  results.clear();
  std::vector<dist::ClockAlignment> clocks;
  const bool domains = std::any_of(summaries.begin(), summaries.end(),
                                   [&](const dist::RankSummary& s) { return s.domain != summaries.front().domain; });
  if (domains) clocks = dist::align_clocks(summaries);
  std::vector<std::string> rank_paths;
  {
    std::vector<std::pair<int32_t, std::string>> p;
    for (const auto& s : summaries) p.emplace_back(s.rank, s.path);
    std::sort(p.begin(), p.end());
    for (auto& [r, path] : p) rank_paths.push_back(path);
  }
  dist::DistributedAnalysis d = dist::analyze_ranks(std::move(summaries));
  d.clocks = std::move(clocks);
  const double summarize_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The rank the report details: the straggler's trace, whose bottleneck is the one to
  // fix, else the lowest rank's. Imported once more: no rank's timeline was kept.
  const int32_t detailed = d.straggler ? d.straggler->rank : d.ranks.front().rank;
  const auto it = std::find_if(ranks.begin(), ranks.end(), [&](const RankInput& r) { return r.rank == detailed; });
  timeline::Timeline tl;
  timeline::ImportStats detail_stats;
  if (Status s = import_rank(*it, io.heads, tl, detail_stats); !s.ok()) return s;
  auto ctx = resolve_machine_context(analyses::device_specs(tl), ao.ceilings);
  if (!ctx.ok()) return ctx.status();
  const analyses::Analysis a = analyses::analyze(tl, ctx.value());
  const rules::TraceEvidence te{tl, a, &detail_stats};
  const rules::RankEvidence re{d};
  rules::EvidenceSet ev;
  ev.trace = &te;
  ev.ranks = &re;
  const rules::Diagnosis diag = rules::diagnose(ev);
  report::Report r = build_report(tl, a, diag, stats);
  r.inputs.clear();
  for (const auto& ri : ranks) {
    for (const auto& f : ri.files) {
      report::InputInfo in;
      in.path = f;
      in.format = f.find(".cptrace") != std::string::npos ? "cupti" : "kineto";
      std::error_code ec;
      const auto size = std::filesystem::file_size(f, ec);
      in.bytes = ec ? 0 : size;
      in.events = -1;
      r.inputs.push_back(std::move(in));
    }
  }
  report::Distributed rd;
  rd.ranks = std::move(d);
  rd.rank_paths = std::move(rank_paths);
  rd.domains = paths;
  rd.detailed_rank = detailed;
  rd.summarize_seconds = summarize_s;
  rd.workers = workers;
  r.distributed = std::move(rd);
  return r;
}

}  // namespace chokepoint::pipeline
