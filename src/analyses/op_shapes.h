// What the recorded input shapes of an ATen op say about its work (record_shapes=True):
// the fewest bytes it must move and, for GEMM-like ops, their dimensions and FLOPs.
// Shared by the roofline, the fusion estimate and the what-ifs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analyses/kernel_class.h"
#include "timeline/model.h"

namespace chokepoint::analyses {

// Bytes per element of a recorded tensor type ("float" 4, "c10::BFloat16" 2, "long int"
// 8 ...); 0 when unknown.
double type_bytes(std::string_view type);
// Bytes per element of a precision; 0 for unknown.
double element_bytes(Precision p);

// The fewest bytes an op moves: its tensor inputs read once and an output as large as its
// largest input written once, or, for an op that reduces (aten::sum, mean, amax, norm ...),
// an output too small to count. 0 when the op recorded no shapes.
double op_io_bytes(const timeline::Timeline& tl, int32_t op_row);

// The numel of input j of the op (its dims multiplied), 0 when absent.
double op_input_numel(const timeline::Timeline& tl, int32_t op_row, uint32_t j);

struct GemmShape {
  double batch = 1, m = 0, n = 0, k = 0;
  std::string text;  // "[8192,4096]x[4096,4096]"
  double flops() const { return 2 * batch * m * n * k; }
  // Inputs read once and the output written once, `eb` bytes per element.
  double bytes(double eb) const { return eb * batch * (m * k + k * n + m * n); }
  // Elements of the operand that does not grow with the batch (the weight of a linear).
  double weight_elements() const { return k * n; }
};

// M, N, K (and batch) of aten::mm, addmm, bmm, baddbmm, linear, matmul and _scaled_mm
// from their recorded inputs; nullopt for other ops or when the dims are not understood.
std::optional<GemmShape> gemm_shape(const timeline::Timeline& tl, int32_t op_row);

}  // namespace chokepoint::analyses
