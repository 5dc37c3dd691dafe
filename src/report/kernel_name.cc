#include "report/kernel_name.h"

#include <algorithm>
#include <array>

namespace chokepoint::report {
namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";
constexpr std::string_view kEllipsis = "...";
constexpr size_t kMinWidth = 8;

// Walks `s` token by token, tracking bracket depth, and calls fn(pos, len, depth) with
// the depth before the token. A token is one character, or a span whose brackets are not
// nesting: "(anonymous namespace)" (a qualifier, not a call) and "->" (closes nothing).
// fn returns false to stop the walk.
template <typename Fn>
void walk_top_level(std::string_view s, Fn fn) {
  int depth = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    if (s.substr(i, kAnonymous.size()) == kAnonymous) len = kAnonymous.size();
    if (s.substr(i, 2) == "->") len = 2;
    if (!fn(i, len, depth)) return;
    if (len == 1) {
      const char c = s[i];
      if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
      if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    }
    i += len;
  }
}

// "f<T>(int, float)" -> "f<T>": cuts at the first top-level '('.
std::string strip_parameters(std::string_view s) {
  size_t cut = s.size();
  walk_top_level(s, [&](size_t i, size_t len, int depth) {
    if (depth == 0 && len == 1 && s[i] == '(') {
      cut = i;
      return false;
    }
    return true;
  });
  return std::string(s.substr(0, cut));
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Generic PyTorch wrappers that hold the operation rather than name it.
constexpr std::array<std::string_view, 8> kWrapperNames = {
    "BinaryFunctor",   "UnaryFunctor",           "AUnaryFunctor",  "BUnaryFunctor",
    "gpu_kernel_impl", "gpu_kernel_impl_nocast", "func_wrapper_t", "ReduceOp"};

// Whether `word` (followed in the name by `next`) names an operation: a functor, an op,
// a kernel or implementation function, or a function whose lambda is the operation
// ("launch_clamp_scalar(...)::{lambda()#1}").
bool names_operation(std::string_view word, char next) {
  if (std::find(kWrapperNames.begin(), kWrapperNames.end(), word) != kWrapperNames.end()) {
    return false;
  }
  if (word == "operator" || word == "lambda" || (word[0] >= '0' && word[0] <= '9')) return false;
  static constexpr std::array<std::string_view, 6> kSuffixes = {"Op", "Ops", "_kernel", "_cuda", "_impl", "Impl"};
  return word.find("unctor") != std::string_view::npos || next == '(' ||
         std::any_of(kSuffixes.begin(), kSuffixes.end(),
                     [&](std::string_view suffix) { return word.ends_with(suffix); });
}

// The operation a template argument list carries: the first identifier in it that names
// one ("MulFunctor" in "4, BinaryFunctor<float, float, float, MulFunctor<float>>").
// PyTorch instantiates one generic kernel (vectorized_elementwise_kernel, reduce_kernel,
// ...) per operation and names the operation only here, so without it the rows of a
// top-kernels table read alike. Empty when there is none.
std::string_view operation_hint(std::string_view args) {
  for (size_t i = 0; i < args.size();) {
    if (!is_word_char(args[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < args.size() && is_word_char(args[end])) ++end;
    const std::string_view word = args.substr(i, end - i);
    if (names_operation(word, end < args.size() ? args[end] : '\0')) return word;
    i = end;
  }
  return {};
}

// "a::f<4, MulFunctor<float>>::g<int>" -> "a::f<MulFunctor>::g<...>": each top-level
// template list becomes its operation hint or "...". What parentheses hold stays (it may
// be the whole name, as in "Memcpy HtoD (Pageable -> Device)").
std::string collapse_templates(std::string_view s) {
  std::string out;
  size_t args_start = std::string_view::npos;
  walk_top_level(s, [&](size_t i, size_t len, int depth) {
    if (args_start != std::string_view::npos) {
      if (depth == 1 && len == 1 && s[i] == '>') {  // closes the top-level list
        const std::string_view hint = operation_hint(s.substr(args_start, i - args_start));
        out += hint.empty() ? kEllipsis : hint;
        out += '>';
        args_start = std::string_view::npos;
      }
      return true;
    }
    out += s.substr(i, len);
    if (depth == 0 && len == 1 && s[i] == '<') args_start = i + 1;
    return true;
  });
  if (args_start != std::string_view::npos) out += std::string(kEllipsis) + ">";  // unclosed
  return out;
}

// "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_nn>" -> the first template argument.
// These wrappers are the same for every CUTLASS kernel; the argument names what runs.
std::string unwrap_generic_kernel(const std::string& s) {
  static constexpr std::array<std::string_view, 3> kWrappers = {"cutlass::Kernel<", "cutlass::Kernel2<",
                                                                "cutlass::device_kernel<"};
  for (std::string_view w : kWrappers) {
    if (!s.starts_with(w)) continue;
    // The wrapper's list must run to the end of the name; its first argument ends at the
    // first comma or '>' of depth 1.
    size_t arg_end = std::string::npos, list_end = std::string::npos;
    walk_top_level(s, [&](size_t i, size_t len, int depth) {
      if (i < w.size() || depth != 1 || len != 1) return true;
      if (s[i] == ',' && arg_end == std::string::npos) arg_end = i;
      if (s[i] == '>') {
        list_end = i;
        return false;
      }
      return true;
    });
    if (list_end != s.size() - 1) continue;
    std::string_view arg(s);
    arg = arg.substr(w.size(), std::min(arg_end, list_end) - w.size());
    while (!arg.empty() && arg.front() == ' ') arg.remove_prefix(1);
    while (!arg.empty() && arg.back() == ' ') arg.remove_suffix(1);
    if (!arg.empty()) return std::string(arg);
  }
  return s;
}

// Cuts `s` to `max_width` with "...". A trailing template list (the operation, after
// collapse_templates) is the most telling part, so it is kept whole when the head keeps
// at least kMinHead characters: "vectorized_elementwi...<CUDAFunctor_add>".
std::string cut(const std::string& s, size_t max_width) {
  constexpr size_t kMinHead = 8;
  size_t tail = std::string::npos;
  walk_top_level(s, [&](size_t i, size_t len, int depth) {
    if (depth == 0 && len == 1 && s[i] == '<') tail = i;
    return true;
  });
  if (tail != std::string::npos && s.ends_with('>') && kMinHead + kEllipsis.size() + (s.size() - tail) <= max_width) {
    const size_t head = max_width - kEllipsis.size() - (s.size() - tail);
    return s.substr(0, head) + std::string(kEllipsis) + s.substr(tail);
  }
  return s.substr(0, max_width - kEllipsis.size()) + std::string(kEllipsis);
}

// "at::native::f<...>" -> "f<...>": keeps what follows the last top-level "::".
std::string drop_namespaces(std::string_view s) {
  size_t start = 0;
  walk_top_level(s, [&](size_t i, size_t len, int depth) {
    if (depth == 0 && s.substr(i, 2) == "::") start = i + 2;
    return true;
  });
  return std::string(s.substr(start));
}

}  // namespace

std::string shorten_kernel_name(std::string_view name, size_t max_width) {
  max_width = std::max(max_width, kMinWidth);
  std::string s = name.starts_with("void ") ? strip_parameters(name.substr(5)) : std::string(name);
  if (s.size() <= max_width) return s;
  s = unwrap_generic_kernel(s);
  if (s.size() <= max_width) return s;
  s = collapse_templates(s);
  if (s.size() <= max_width) return s;
  s = drop_namespaces(s);
  if (s.size() <= max_width) return s;
  return cut(s, max_width);
}

std::vector<std::string> distinct_kernel_names(const std::vector<std::string>& names, size_t max_width) {
  constexpr size_t kSuffixW = 4;  // " #2" .. " #9", and room for " #10"
  std::vector<std::string> shown;
  for (const auto& n : names) shown.push_back(shorten_kernel_name(n, max_width));
  for (size_t i = 0; i < shown.size(); ++i) {
    int seen = 1;
    for (size_t k = 0; k < i; ++k) seen += names[k] != names[i] && shorten_kernel_name(names[k], max_width) == shown[i];
    if (seen == 1) continue;
    std::string s = shorten_kernel_name(names[i], max_width > kSuffixW + 8 ? max_width - kSuffixW : max_width);
    s += " #";
    s += std::to_string(seen);
    shown[i] = s;
  }
  return shown;
}

}  // namespace chokepoint::report
