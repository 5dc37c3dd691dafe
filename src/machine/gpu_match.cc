#include "machine/gpu_match.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <vector>

namespace chokepoint::machine {
namespace {

using Tokens = std::vector<std::string>;

// Lower-case alphanumeric runs: "NVIDIA A100-SXM4-80GB" -> nvidia a100 sxm4 80gb.
Tokens tokens_of(std::string_view s) {
  Tokens out;
  std::string cur;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      cur.push_back(static_cast<char>(std::tolower(c)));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool has(const Tokens& t, std::string_view tok) {
  for (const auto& x : t) {
    if (x == tok) return true;
  }
  return false;
}

bool has_all(const Tokens& t, const Tokens& need) {
  for (const auto& n : need) {
    if (!has(t, n)) return false;
  }
  return !need.empty();
}

// The name split at "mig": the part's tokens before it, the slice profile's after it.
struct NameParts {
  Tokens part, slice;
  bool mig = false;
};

NameParts split_name(std::string_view name) {
  NameParts p;
  for (auto& t : tokens_of(name)) {
    if (t == "mig") {
      p.mig = true;
    } else {
      (p.mig ? p.slice : p.part).push_back(std::move(t));
    }
  }
  return p;
}

// A leading number of a token followed by `suffix` ("3g" -> 3 for "g"); -1 otherwise.
int number_before(const std::string& tok, std::string_view suffix) {
  if (tok.size() <= suffix.size() || tok.compare(tok.size() - suffix.size(), suffix.size(), suffix) != 0) return -1;
  const std::string digits = tok.substr(0, tok.size() - suffix.size());
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  return std::stoi(digits);
}

bool form_named(const GpuModel& m, const Tokens& part) {
  for (const auto& f : tokens_of(m.forms)) {
    if (has(part, f)) return true;
  }
  return false;
}

// CUDA reports memory in bytes less what the driver reserves: 150109880320 B = 139.8 GiB
// for the 141 GB H200 (tests/data/kineto), 85 GB = 79.2 GiB for an 80 GB part. Within a
// tenth is the same size; the sizes of one model's variants differ by more (80/94, 40/80).
constexpr double kMemoryTolerance = 0.1;

// How well a row fits: its form-factor token in the name (8), its SM count (4), its
// memory size in the name ("80gb", 3) or reported (2). A plain name ("=") fits the row
// that CUDA names without a suffix when no row's form token is in the name.
int score(const GpuModel& m, const NameParts& n, bool any_form, int32_t sms, int64_t memory_bytes) {
  int s = 0;
  if (form_named(m, n.part) || (!any_form && std::string_view(m.forms).find('=') != std::string_view::npos)) s += 8;
  if (!n.mig && sms > 0 && sms == m.sms) s += 4;
  const std::string gb = std::to_string(std::lround(m.memory_gb)) + "gb";
  const double gib = static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  if (has(n.part, gb)) {
    s += 3;  // the name's size outranks the reported one (a MIG slice reports its own)
  } else if (!n.mig && memory_bytes > 0 && std::abs(gib - m.memory_gb) < kMemoryTolerance * m.memory_gb) {
    s += 2;
  }
  return s;
}

std::string percent(double share) { return std::to_string(std::lround(100 * share)) + "%"; }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Scales a MIG slice: compute by its SMs (reported, else its compute slices of the
// part's), bandwidth and L2 by its memory (named in the profile, else reported).
void scale_mig(GpuMatch& g, const NameParts& n, int32_t sms, int64_t memory_bytes) {
  const GpuModel& m = *g.model;
  int gpcs = -1, gb = -1;
  for (const auto& t : n.slice) {
    if (gpcs < 0) gpcs = number_before(t, "g");
    if (gb < 0) gb = number_before(t, "gb");
  }
  if (gpcs > 0 && gb > 0) g.mig_profile = std::to_string(gpcs) + "g." + std::to_string(gb) + "gb";
  std::string compute = "compute as the whole part (the slice's SMs are unknown)";
  if (sms > 0) {
    g.sm_share = std::min(1.0, static_cast<double>(sms) / m.sms);
    compute = "compute scaled to " + std::to_string(sms) + " of " + std::to_string(m.sms) + " SMs";
  } else if (gpcs > 0 && m.mig_slices > 0) {
    g.sm_share = std::min(1.0, static_cast<double>(gpcs) / m.mig_slices);
    compute = "compute scaled to " + std::to_string(gpcs) + " of " + std::to_string(m.mig_slices) + " compute slices";
  }
  compute += " (" + percent(g.sm_share) + ")";
  const double slice_gb = gb > 0             ? gb
                          : memory_bytes > 0 ? static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0)
                                             : -1;
  std::string memory = "memory bandwidth and L2 as the whole part (the slice's memory is unknown)";
  if (slice_gb > 0) {
    g.memory_share = std::min(1.0, slice_gb / m.memory_gb);
    memory = "memory bandwidth and L2 to " + number(std::round(slice_gb)) + " of " + number(m.memory_gb) + " GB (" +
             percent(g.memory_share) + ")";
  }
  std::string what = "MIG slice";
  if (!g.mig_profile.empty()) what += " " + g.mig_profile;
  g.note = what + " of an " + std::string(m.label) + ": " + compute + ", " + memory;
}

}  // namespace

GpuMatch match_gpu(std::string_view name, int32_t num_sms, int64_t memory_bytes) {
  GpuMatch g;
  const NameParts n = split_name(name);
  std::vector<const GpuModel*> cands;
  for (const GpuModel& m : gpu_models()) {
    if (has_all(n.part, tokens_of(m.model))) cands.push_back(&m);
  }
  if (cands.empty()) return g;
  bool any_form = false;
  for (const GpuModel* m : cands) any_form |= form_named(*m, n.part);
  int best = -1, ties = 0;
  for (const GpuModel* m : cands) {
    const int s = score(*m, n, any_form, num_sms, memory_bytes);
    if (s > best) {
      best = s;
      g.model = m;
      ties = 1;
    } else if (s == best) {
      ++ties;
    }
  }
  const GpuModel& m = *g.model;
  if (ties > 1) {
    g.note = std::string("the name, SM count and memory do not tell the form factors of this GPU apart: assumed ") +
             m.label;
  }
  g.mig = n.mig || (m.mig_slices > 0 && num_sms > 0 && num_sms < m.sms);
  if (g.mig) {
    scale_mig(g, n, num_sms, memory_bytes);
  } else if (num_sms > 0 && num_sms < m.sms) {  // a cut-down part (Orin NX under the AGX Orin row)
    g.sm_share = static_cast<double>(num_sms) / m.sms;
    g.note = "the device has " + std::to_string(num_sms) + " SMs, the published " + m.label + " " +
             std::to_string(m.sms) + ": compute scaled by " + percent(g.sm_share);
  }
  return g;
}

}  // namespace chokepoint::machine
