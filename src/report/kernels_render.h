// Renders the per-kernel roofline of `chokepoint kernels` (analyses/kernel_bounds.h): text
// for a person (each kernel's place against the ceilings, its bound, why, and the advice),
// Markdown (a table and the advice) and JSON (schema chokepoint.kernels/1, every figure in
// base units; unknown figures are left out, never 0).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "analyses/kernel_bounds.h"
#include "base/status.h"
#include "report/style.h"

namespace chokepoint::report {

inline constexpr const char* kKernelsSchema = "chokepoint.kernels/1";

std::string render_kernels_text(const analyses::KernelsView& v, const RenderOptions& o = {});
std::string render_kernels_markdown(const analyses::KernelsView& v);
std::string render_kernels_json(const analyses::KernelsView& v);

// One of kKernelsFormats by name (report/formats.h); kUsage for another name.
Status render_kernels(const analyses::KernelsView& v, std::string_view format, const RenderOptions& o,
                      std::ostream& out);

}  // namespace chokepoint::report
