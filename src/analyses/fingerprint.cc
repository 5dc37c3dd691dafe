#include "analyses/fingerprint.h"

#include <algorithm>
#include <iterator>
#include <string>

#include <fmt/format.h>

namespace chokepoint::analyses {
namespace {

// Sorted, distinct, at most kSketch: the smallest hashes.
void sketch(std::vector<uint64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  if (v.size() > kSketch) v.resize(kSketch);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_python(const std::string& exe) {
  const std::string b = base_name(exe);
  return b.rfind("python", 0) == 0 || b == "py";
}

// A mark is compared when both sides have it and their union has at least this many
// distinct entries (two kernels against 28 say enough; one against one does not).
constexpr size_t kEnough = 3;

bool comparable(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() || b.empty()) return false;
  std::vector<uint64_t> uni;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(uni));
  return uni.size() >= kEnough;
}

}  // namespace

uint64_t mark_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a ...
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  // ... then MurmurHash3's fmix64: FNV-1a leaves names that differ in their last bytes
  // close in the high bits, and a bottom-k sketch keeps the smallest values.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

Fingerprint job_fingerprint(const timeline::Timeline& tl) {
  Fingerprint f;
  const auto& g = tl.gpu_ops;
  std::vector<timeline::StringId> names;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.kind[i] == timeline::GpuOpKind::kKernel) names.push_back(g.name[i]);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (timeline::StringId n : names) f.kernels.push_back(mark_hash(tl.strings.view(n)));
  sketch(f.kernels);
  const auto& in = tl.op_inputs;
  std::string dims;
  for (uint32_t op = 0; op < in.ops(); ++op) {
    for (uint32_t j = 0; j < in.num_inputs(op); ++j) {
      const uint32_t rank = in.rank(op, j);
      if (rank < 2) continue;
      dims.clear();
      for (uint32_t d = 0; d < rank; ++d) dims += (d ? "x" : "") + std::to_string(in.dim(op, j, d));
      f.shapes.push_back(mark_hash(dims));
    }
  }
  sketch(f.shapes);
  return f;
}

std::vector<std::vector<int32_t>> job_groups(const timeline::Timeline& tl) {
  const auto n = static_cast<int32_t>(tl.sources.size());
  std::vector<std::vector<uint64_t>> kernels(tl.sources.size());
  const auto& g = tl.gpu_ops;
  for (size_t i = 0; i < g.size(); ++i) {
    const int16_t d = g.device[i];
    if (g.kind[i] != timeline::GpuOpKind::kKernel || d < 0 || static_cast<size_t>(d) >= tl.devices.size()) continue;
    const int32_t src = tl.devices[d].source_index;
    if (src >= 0 && src < n) kernels[src].push_back(mark_hash(tl.strings.view(g.name[i])));
  }
  for (auto& k : kernels) {
    std::sort(k.begin(), k.end());
    k.erase(std::unique(k.begin(), k.end()), k.end());
    sketch(k);
  }
  std::vector<int32_t> group(tl.sources.size(), -1);
  int32_t groups = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (kernels[i].empty() || group[i] >= 0) continue;
    group[i] = groups;
    // Everything reachable from i through pairs of one job (a depth-first walk).
    std::vector<int32_t> pending = {i};
    while (!pending.empty()) {
      const int32_t a = pending.back();
      pending.pop_back();
      for (int32_t b = 0; b < n; ++b) {
        if (group[b] >= 0 || kernels[b].empty() || sketch_jaccard(kernels[a], kernels[b]) < kSameJob) continue;
        group[b] = groups;
        pending.push_back(b);
      }
    }
    ++groups;
  }
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(std::max(groups, 1)));
  for (int32_t i = 0; i < n; ++i) out[static_cast<size_t>(std::max(group[i], 0))].push_back(i);
  return out;
}

std::string program_of(const std::vector<std::string>& command) {
  if (command.empty()) return "";
  if (!is_python(command[0])) return base_name(command[0]);
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (a == "-m" && i + 1 < command.size()) return "-m " + command[i + 1];
    if (a == "-c") return "python -c";
    if (a.size() > 3 && a.compare(a.size() - 3, 3, ".py") == 0) return base_name(a);
    if (!a.empty() && a[0] != '-') return base_name(a);  // a script without the suffix
  }
  return base_name(command[0]);
}

double sketch_jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return -1;
  // The bottom-k of the union, and how many of them are in both.
  std::vector<uint64_t> uni;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(uni));
  if (uni.size() > kSketch) uni.resize(kSketch);
  size_t both = 0;
  for (uint64_t h : uni) {
    both += std::binary_search(a.begin(), a.end(), h) && std::binary_search(b.begin(), b.end(), h) ? 1 : 0;
  }
  return static_cast<double>(both) / static_cast<double>(uni.size());
}

JobMatch match_jobs(const Fingerprint& a, const Fingerprint& b) {
  JobMatch m;
  if (!a.program.empty() && !b.program.empty()) {
    m.judged = true;
    if (a.program != b.program) {
      m.different = true;
      m.why = "other programs (" + a.program + ", " + b.program + ")";
      return m;
    }
  }
  const bool kernels = comparable(a.kernels, b.kernels);
  const bool shapes = comparable(a.shapes, b.shapes);
  if (kernels) m.kernels = sketch_jaccard(a.kernels, b.kernels);
  if (shapes) m.shapes = sketch_jaccard(a.shapes, b.shapes);
  if (!kernels && !shapes) return m;
  m.judged = true;
  // Shapes say it first: a fix keeps most of the model's shapes (autocast 0.91,
  // torch.compile 0.70) or its kernels (a bigger batch changes the activations' shapes,
  // not the kernels: 1.0); unrelated programs built from the same PyTorch kernels share
  // 0.3-0.45 of their kernel names but almost none of their shapes.
  const bool by_shapes = shapes && m.shapes < kSameJob && (!kernels || m.kernels < kSameKernels);
  const bool by_kernels = !shapes && kernels && m.kernels < kSameJob;
  if (by_shapes || by_kernels) {
    m.different = true;
    std::string parts;
    if (kernels) parts += fmt::format("{:.0f}% of their kernel names", 100 * m.kernels);
    if (shapes) parts += fmt::format("{}{:.0f}% of their tensor shapes", parts.empty() ? "" : " and ", 100 * m.shapes);
    m.why = "they share only " + parts;
  }
  return m;
}

}  // namespace chokepoint::analyses
