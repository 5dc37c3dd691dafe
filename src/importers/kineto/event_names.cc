#include "importers/kineto/event_names.h"

#include <charconv>

namespace chokepoint::importers::kineto {

using timeline::CopyKind;
using timeline::MemKind;
using timeline::SyncKind;

Cat classify_cat(std::string_view c) {
  switch (c.size()) {
    case 5:
      if (c == "Trace") return Cat::kTrace;
      break;
    case 6:
      if (c == "kernel" || c == "Kernel") return Cat::kKernel;
      if (c == "cpu_op") return Cat::kCpuOp;
      if (c == "Memcpy") return Cat::kMemcpy;
      if (c == "Memset") return Cat::kMemset;
      break;
    case 7:
      if (c == "Runtime") return Cat::kRuntime;
      break;
    case 8:
      if (c == "Operator") return Cat::kCpuOp;
      break;
    case 9:
      if (c == "cuda_sync") return Cat::kSync;
      break;
    case 10:
      if (c == "gpu_memcpy") return Cat::kMemcpy;
      if (c == "gpu_memset") return Cat::kMemset;
      break;
    case 11:
      if (c == "cuda_driver") return Cat::kDriver;
      break;
    case 12:
      if (c == "cuda_runtime") return Cat::kRuntime;
      break;
    case 15:
      if (c == "user_annotation") return Cat::kUserAnnotation;
      if (c == "python_function") return Cat::kPythonFunction;
      break;
    case 19:
      if (c == "gpu_user_annotation") return Cat::kGpuUserAnnotation;
      break;
  }
  return Cat::kOther;
}

MemKind mem_kind(std::string_view s) {
  if (s == "Pageable") return MemKind::kPageable;
  if (s == "Pinned") return MemKind::kPinned;
  if (s == "Device" || s == "Device Static") return MemKind::kDevice;
  if (s == "Array") return MemKind::kArray;
  if (s == "Managed" || s == "Managed Static") return MemKind::kManaged;
  return MemKind::kUnknown;
}

CopyKind copy_kind(std::string_view s) {
  if (s == "HtoD") return CopyKind::kHtoD;
  if (s == "DtoH") return CopyKind::kDtoH;
  if (s == "DtoD") return CopyKind::kDtoD;
  if (s == "HtoH") return CopyKind::kHtoH;
  if (s == "PtoP") return CopyKind::kPtoP;
  return CopyKind::kUnknown;
}

std::string_view in_parens(std::string_view name) {
  const size_t open = name.find('(');
  const size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return {};
  }
  return name.substr(open + 1, close - open - 1);
}

void parse_memcpy_name(std::string_view name, CopyKind* kind, MemKind* src, MemKind* dst) {
  constexpr std::string_view kPrefix = "Memcpy ";
  if (name.substr(0, kPrefix.size()) == kPrefix) {
    *kind = copy_kind(name.substr(kPrefix.size(), 4));
  }
  std::string_view kinds = in_parens(name);
  const size_t arrow = kinds.find(" -> ");
  if (arrow != std::string_view::npos) {
    *src = mem_kind(kinds.substr(0, arrow));
    *dst = mem_kind(kinds.substr(arrow + 4));
  }
}

SyncKind sync_kind(std::string_view s) {
  if (s == "Event Sync") return SyncKind::kEventSync;
  if (s == "Stream Wait Event") return SyncKind::kStreamWaitEvent;
  if (s == "Stream Sync") return SyncKind::kStreamSync;
  if (s == "Context Sync") return SyncKind::kContextSync;
  return SyncKind::kUnknown;
}

bool profiler_step_number(std::string_view name, int64_t* n) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return false;
  const char* b = name.data() + kPrefix.size();
  const char* e = name.data() + name.size();
  auto [p, ec] = std::from_chars(b, e, *n);
  return ec == std::errc() && p == e;
}

}  // namespace chokepoint::importers::kineto
