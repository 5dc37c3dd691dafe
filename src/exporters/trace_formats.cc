#include "exporters/trace_formats.h"

namespace chokepoint::exporters {
namespace {

constexpr TraceFormat kFormats[] = {
    {"chrome", "perfetto"},  // Chrome trace-event JSON, which ui.perfetto.dev reads too
};

}  // namespace

std::span<const TraceFormat> trace_formats() { return kFormats; }

bool is_trace_format(std::string_view format) {
  for (const TraceFormat& f : kFormats) {
    if (!format.empty() && (format == f.name || format == f.alias)) return true;
  }
  return false;
}

std::string trace_format_list(std::string_view alias_word) {
  std::string s;
  for (const TraceFormat& f : kFormats) {
    if (!s.empty()) s += ", ";
    s += f.name;
    if (f.alias.empty()) continue;
    s += " (";
    if (!alias_word.empty()) s.append(alias_word).push_back(' ');
    s.append(f.alias).push_back(')');
  }
  return s;
}

}  // namespace chokepoint::exporters
