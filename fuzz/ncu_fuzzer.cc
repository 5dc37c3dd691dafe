// libFuzzer target for the Nsight Compute CSV importer (importers/ncu/) followed by what
// reads its launches: the per-kernel roofline against the published H200 ceilings and the
// three renderings of `chokepoint kernels`. Besides crashes, hangs and memory blowups it
// checks that every figure is finite and non-negative where it must be.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "analyses/kernel_bounds.h"
#include "importers/ncu/ncu_csv.h"
#include "report/kernels_render.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "ncu_fuzzer: %s\n", what);
    std::abort();
  }
}

void finite(const std::optional<double>& v, const char* what) { check(!v || std::isfinite(*v), what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)chokepoint::importers::looks_like_ncu_csv(text);
  auto r = chokepoint::importers::parse_ncu_csv(text);
  if (!r.ok()) {
    check(!r.status().message().empty(), "an error without a message");
    return 0;
  }
  check(!r.value().kernels.empty(), "ok without a launch");
  chokepoint::machine::DeviceSpec d;
  d.name = "NVIDIA H200";
  d.num_sms = 132;
  d.cc_major = 9;
  chokepoint::analyses::KernelsView v;
  v.measured = true;
  v.ceilings = chokepoint::machine::published_ceilings_for(d);
  for (const auto& m : r.value().kernels) {
    finite(m.duration_ns, "duration not finite");
    finite(m.dram_read_bytes, "DRAM bytes not finite");
    const auto k = chokepoint::analyses::point_from_ncu(m, v.ceilings);
    finite(k.tflops, "TFLOP/s not finite");
    finite(k.dram_gbps, "GB/s not finite");
    finite(k.pct_of_bench, "bench share not finite");
    check(!k.why.empty() && !k.advice.empty(), "a kernel without its why or advice");
    v.kernels.push_back(k);
    if (v.kernels.size() >= 50) break;
  }
  check(!chokepoint::report::render_kernels_text(v).empty(), "empty text");
  check(!chokepoint::report::render_kernels_markdown(v).empty(), "empty markdown");
  check(!chokepoint::report::render_kernels_json(v).empty(), "empty json");
  return 0;
}
