#include "pipeline/rank_inputs.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>

#include "importers/cupti/cupti_scan.h"
#include "importers/importer.h"
#include "importers/input/byte_source.h"
#include "importers/input/same_content.h"
#include "pipeline/inputs.h"
#include "samples/recording_reader.h"
#include "tracer/trace_format.h"

namespace chokepoint::pipeline {
namespace fs = std::filesystem;

namespace {

// The integer after `"key"` and its colon at or after `from`, -1 none.
int64_t int_after(const std::string& s, size_t from, const std::string& key) {
  const size_t k = s.find("\"" + key + "\"", from);
  if (k == std::string::npos) return -1;
  size_t i = s.find(':', k);
  if (i == std::string::npos) return -1;
  ++i;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
  int64_t v = 0;
  bool any = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0 && v < (int64_t{1} << 40)) {
    v = v * 10 + (s[i++] - '0');
    any = true;
  }
  return any ? v : -1;
}

void add_file(std::map<std::pair<int32_t, int32_t>, RankInput>& by_rank, int32_t rank, int32_t domain,
              const std::string& file) {
  RankInput& r = by_rank[{rank, domain}];
  r.rank = rank;
  r.domain = domain;
  r.files.push_back(file);
}

}  // namespace

int32_t rank_in_head(const std::string& head) {
  const size_t d = head.find("\"distributedInfo\"");
  if (d == std::string::npos) return -1;
  const size_t end = head.find('}', d);
  const int64_t r = int_after(head.substr(0, end == std::string::npos ? head.size() : end), d, "rank");
  return r >= 0 && r < (int64_t{1} << 24) ? static_cast<int32_t>(r) : -1;
}

int64_t pid_of_trace_file(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (!name.starts_with("trace-")) return -1;
  int64_t v = 0;
  size_t i = 6;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) != 0 && v < (int64_t{1} << 40); ++i)
    v = v * 10 + (name[i] - '0');
  return i > 6 ? v : -1;
}

namespace {

using ByRank = std::map<std::pair<int32_t, int32_t>, RankInput>;

// CUPTI traces that name no rank, as ranks by their GPUs: each process (its files, the
// whole trace and its windows) ran NCCL kernels on one GPU, a GPU no other process used;
// rank k is the process on the kth of those GPUs. False (nothing added) otherwise: two
// processes on one GPU, a process on two, or no NCCL (independent jobs side by side are
// not ranks of one).
bool add_by_device(const std::vector<std::string>& files, int32_t domain, ByRank& by_rank) {
  // Two processes at least, from the files' headers, before reading any whole: a
  // single-process recording (the common case) is not read twice.
  std::set<int64_t> pids;
  for (const std::string& f : files) {
    auto head = importers::read_head(f, sizeof(tracer::FileHeader));
    if (!head.ok() || head.value().size() < sizeof(tracer::FileHeader) ||
        head.value().compare(0, sizeof(tracer::kMagic), tracer::kMagic, sizeof(tracer::kMagic)) != 0)
      return false;
    tracer::FileHeader h{};
    std::memcpy(&h, head.value().data(), sizeof h);
    pids.insert(h.pid);
  }
  if (pids.size() < 2) return false;
  struct Process {
    std::vector<std::string> files;
    std::set<int32_t> devices;
    bool nccl = false;
  };
  std::map<int64_t, Process> by_pid;
  for (const std::string& f : files) {
    auto scan = importers::scan_cupti_file(f);
    if (!scan.ok() || scan.value().pid < 0) return false;
    Process& p = by_pid[scan.value().pid];
    p.files.push_back(f);
    p.devices.insert(scan.value().devices.begin(), scan.value().devices.end());
    p.nccl = p.nccl || scan.value().nccl;
  }
  std::map<int32_t, std::pair<int64_t, const Process*>> by_gpu;
  for (const auto& [pid, p] : by_pid) {
    if (p.devices.size() != 1 || !p.nccl) return false;
    if (!by_gpu.emplace(*p.devices.begin(), std::make_pair(pid, &p)).second) return false;
  }
  if (by_gpu.size() < 2) return false;
  int32_t rank = 0;
  for (const auto& [gpu, pp] : by_gpu) {
    for (const std::string& f : pp.second->files) add_file(by_rank, rank, domain, f);
    by_rank[{rank, domain}].by_device = "GPU " + std::to_string(gpu) + ", pid " + std::to_string(pp.first);
    ++rank;
  }
  return true;
}

// A recording's CUPTI traces, one per process, by the rank its process had (or, when no
// process had one, by their GPUs); false when a trace's process had none (or the
// recording does not read).
bool add_recording(const PlannedPath& p, int32_t domain, ByRank& by_rank) {
  if (!p.recording) return false;
  std::vector<std::string> unranked;
  ByRank named;
  for (const std::string& f : importers::distinct_contents(p.trace_files)) {
    const int64_t pid = pid_of_trace_file(f);
    int32_t rank = -1;
    for (const auto& proc : p.recording->meta.processes) {
      if (proc.pid == pid && proc.rank) rank = *proc.rank;
    }
    if (rank < 0) {
      unranked.push_back(f);
      continue;
    }
    add_file(named, rank, domain, f);
  }
  if (unranked.empty() || (named.empty() && add_by_device(unranked, domain, by_rank))) {
    by_rank.merge(named);
    return true;
  }
  by_rank.merge(named);
  return false;
}

// Trace files by the rank their head names (or, when none names one, CUPTI traces by
// their GPUs); false when one names none.
bool add_traces(const PlannedPath& p, const InputPlan& plan, int32_t domain, ByRank& by_rank) {
  std::vector<std::string> unranked;
  ByRank named;
  for (const std::string& f : p.trace_files) {
    const auto it = plan.ranks.find(f);
    const int32_t rank = it == plan.ranks.end() ? -1 : it->second;
    if (rank < 0) {
      unranked.push_back(f);
      continue;
    }
    add_file(named, rank, domain, f);
  }
  const bool all = unranked.empty() || (named.empty() && add_by_device(unranked, domain, by_rank));
  by_rank.merge(named);
  return all;
}

}  // namespace

std::vector<RankInput> rank_inputs(const InputPlan& plan) {
  ByRank by_rank;
  bool all = true;
  for (size_t i = 0; i < plan.paths.size(); ++i) {
    const auto domain = static_cast<int32_t>(i);
    const PlannedPath& p = plan.paths[i];
    all = (p.is_recording ? add_recording(p, domain, by_rank) : add_traces(p, plan, domain, by_rank)) && all;
  }
  // Files without a rank beside ranked ones, or one rank seen twice in two domains: not a
  // job's ranks; the pooled analysis applies.
  std::vector<RankInput> out;
  for (auto& [k, r] : by_rank) {
    if (!out.empty() && out.back().rank == r.rank) return {};
    out.push_back(std::move(r));
  }
  if (out.size() < 2 || !all) return {};
  return out;
}

}  // namespace chokepoint::pipeline
