// The trace-event export formats `analyze --format` accepts besides the reporters' (one
// list: the CLI's help, errors and validation read it). They write the events, not a
// report: pipeline/chrome_export.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace chokepoint::exporters {

struct TraceFormat {
  std::string_view name;
  std::string_view alias;  // "" for none
};

std::span<const TraceFormat> trace_formats();
// True for a name or alias of trace_formats().
bool is_trace_format(std::string_view format);
// "chrome (perfetto)", or with `alias_word` "alias": "chrome (alias perfetto)".
std::string trace_format_list(std::string_view alias_word = {});

}  // namespace chokepoint::exporters
