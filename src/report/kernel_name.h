// Display names for GPU kernels. Demangled CUDA kernel names run to hundreds of
// characters of template arguments and parameter lists; a table column needs the part a
// person recognizes (the function name). The JSON report keeps the full name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chokepoint::report {

// A name of at most `max_width` characters (never less than the 8 that a useful name
// needs), shortened only as far as needed, in this order:
//   1. a demangled signature ("void f<...>(args)") loses "void " and its parameter list;
//   2. generic CUTLASS wrappers (cutlass::Kernel<X>) are replaced by the X they run;
//   3. each template argument list collapses to the operation it carries, when one is
//      named there ("vectorized_elementwise_kernel<MulFunctor>"), else to "<...>";
//   4. namespace qualifiers are dropped, keeping the function name;
//   5. what is still too long is cut with "...", in the function name when that keeps
//      the operation ("vectorized_elementwi...<CUDAFunctor_add>"), else at the end.
// Names that are not C++ signatures ("Memcpy HtoD (Pageable -> Device)") pass through
// steps 1-4 unchanged.
std::string shorten_kernel_name(std::string_view name, size_t max_width);

// The display names of the rows of one table: shorten_kernel_name's, except that where
// different kernels would show the same name (two instantiations of
// vectorized_elementwise_kernel<MulFunctor>), the second and later end in " #2", " #3"
// so that no two rows read alike; the JSON keeps the full names.
std::vector<std::string> distinct_kernel_names(const std::vector<std::string>& names, size_t max_width);

}  // namespace chokepoint::report
