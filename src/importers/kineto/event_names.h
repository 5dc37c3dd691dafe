// What Kineto's event names and categories say: the kind of event (cat), the direction
// and memory kinds of a copy ("Memcpy HtoD (Pageable -> Device)"), the kind of a sync,
// the number of a ProfilerStep#N.
#pragma once

#include <cstdint>
#include <string_view>

#include "timeline/model.h"

namespace chokepoint::importers::kineto {

// The event categories the importer tells apart.
enum class Cat : uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kCpuOp,
  kUserAnnotation,
  kPythonFunction,
  kRuntime,
  kDriver,
  kSync,
  kGpuUserAnnotation,
  kTrace,
  kOther
};

// Current Kineto categories, plus the capitalised ones of PyTorch 1.8-era traces.
Cat classify_cat(std::string_view cat);

// CUPTI's memory kinds as Kineto writes them: Pageable, Pinned, Device, Array, Managed,
// and "Device Static" / "Managed Static" for statically allocated memory.
timeline::MemKind mem_kind(std::string_view s);

// "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"; others (CUPTI's array copies) are kUnknown.
timeline::CopyKind copy_kind(std::string_view s);

// The text inside the parentheses: "Device" of "Memset (Device)".
std::string_view in_parens(std::string_view name);

// Direction and memory kinds of "Memcpy HtoD (Pageable -> Device)"; what the name does not
// say is left as it was.
void parse_memcpy_name(std::string_view name, timeline::CopyKind* kind, timeline::MemKind* src, timeline::MemKind* dst);

// "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync".
timeline::SyncKind sync_kind(std::string_view s);

// N of "ProfilerStep#N"; false when `name` is no such name.
bool profiler_step_number(std::string_view name, int64_t* n);

}  // namespace chokepoint::importers::kineto
