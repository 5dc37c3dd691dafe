#include "machine/ceilings.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace chokepoint::machine {
namespace {

struct Published {
  const char* key;         // lower-case substring of the CUDA device name
  const char* gpu;
  double hbm, fp32, tf32, bf16, fp8;  // TB/s, TFLOP/s (dense); 0 = none
  int pcie_gen;
};

// REFERENCE.md section 9 (vendor datasheets, dense, no sparsity). Order matters: the
// first key contained in the name wins, so "h100 pcie" would need to precede "h100".
constexpr Published kPublished[] = {
    {"h200", "H200 SXM", 4.8, 67, 495, 989, 1979, 5},
    {"h100", "H100 SXM", 3.35, 67, 495, 989, 1979, 5},
    {"a100", "A100 SXM 80GB", 2.04, 19.5, 156, 312, 0, 4},
    {"l4", "L4", 0.30, 30, 60, 121, 242, 4},
    {"t4", "T4", 0.32, 8.1, 0, 65, 0, 3},
};

// Theoretical per-direction PCIe x16 bandwidth by generation, GB/s (REFERENCE.md 9).
double pcie_x16_gbps(int gen) {
  switch (gen) {
    case 3: return 15.8;
    case 4: return 31.5;
    case 5: return 63.0;
    default: return 0;
  }
}

// Achievable fraction of the theoretical link for pinned copies: 53.1/63 and 55.3/63
// measured on the H200 machine (REFERENCE.md section 1) -> ~0.85.
constexpr double kPinnedEfficiency = 0.85;
// Pageable copies reached 6.5 (H2D) and 10.9 (D2H) GB/s on that machine against 53-55
// pinned: about 0.15 of the pinned rate for H2D.
constexpr double kPageableFraction = 0.15;

}  // namespace

Ceilings ceilings_for(const timeline::Device& d) {
  Ceilings c;
  c.num_sms = d.num_sms;
  c.has_tensor_cores = d.cc_major >= 7;
  c.has_tf32 = d.cc_major >= 8;
  std::string lower = d.name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const auto& p : kPublished) {
    if (lower.find(p.key) == std::string::npos) continue;
    c.gpu = p.gpu;
    c.source = std::string("published:") + p.gpu;
    c.hbm_gbps = p.hbm * 1000.0;
    c.fp32_tflops = p.fp32;
    if (p.tf32 > 0) c.tf32_tflops = p.tf32;
    if (p.bf16 > 0) c.bf16_tflops = p.bf16;
    if (p.fp8 > 0) c.fp8_tflops = p.fp8;
    c.pcie_theoretical_gbps = pcie_x16_gbps(p.pcie_gen);
    c.pcie_gbps = *c.pcie_theoretical_gbps * kPinnedEfficiency;
    c.pageable_gbps = *c.pcie_gbps * kPageableFraction;
    if (d.cc_major < 0) {  // no compute capability recorded: trust the table
      c.has_tensor_cores = p.bf16 > 0;
      c.has_tf32 = p.tf32 > 0;
    }
    return c;
  }
  c.source = "unknown";
  return c;
}

}  // namespace chokepoint::machine
