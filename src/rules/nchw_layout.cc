// nchw-layout: a half-precision convnet runs in NCHW: cuDNN wraps its NHWC convolution
// kernels in layout transposes, and ATen's NCHW batch-norm and pooling kernels are far
// slower than their channels_last versions (ResNet-50 on the H200: 31.5 ms of NCHW batch
// norm per step against 12.5 ms channels_last).
#include <fmt/format.h>

#include "rules/rule.h"

namespace chokepoint::rules {
namespace {
// Worth a change at the headline's bar.
constexpr double kMinGain = 1.05;
}  // namespace

std::optional<Finding> nchw_layout(const TraceEvidence& c) {
  const auto* e = analyses::estimate_of(c.a, analyses::whatif::Remedy::kChannelsLast);
  if (e == nullptr || e->speedup < kMinGain) return std::nullopt;
  const double share = 100.0 * (1.0 - 1.0 / e->speedup);
  Finding f = new_finding(share, e->speedup);
  f.remedies = {"channels-last"};
  f.title = "Convolutions run on NCHW tensors: layout transposes and NCHW batch-norm kernels cost the step";
  f.detail = fmt::format("In channels_last {} (replayed: {:.2f} -> {:.2f} ms per step).", e->change, e->step_ms_before,
                         e->step_ms_after);
  f.evidence = {evidence("channels_last_gain", e->speedup, "x", kMinGain),
                evidence("step_ms_before", e->step_ms_before, "ms"), evidence("step_ms_after", e->step_ms_after, "ms")};
  f.recommendation =
      "model = model.to(memory_format=torch.channels_last); x = x.to(memory_format=torch.channels_last) each step.";
  return f;
}

// The rule (listed in registry.cc); its texts are what `chokepoint explain nchw-layout` prints.
extern const Rule nchw_layout_rule = {
    .id = "nchw-layout",
    .category = Category::kMemory,
    .trace = nchw_layout,
    .meaning =
        "A half-precision convnet runs in NCHW: cuDNN wraps its NHWC convolutions in layout "
        "transposes and NCHW batch norm and pooling kernels are much slower than their "
        "channels_last versions.",
    .detection =
        "From a trace: layout transpose kernels and NCHW norm/pool kernels around half-precision "
        "convolutions, when replaying in channels_last gains at least 1.05x.",
    .action =
        "model.to(memory_format=torch.channels_last) and the same for each batch. Remedy "
        "channels-last.",
};

}  // namespace chokepoint::rules
