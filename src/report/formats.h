// The one list of report formats every command's --format reads: their names, the one
// alias, and which of them each command offers. A command renders through report/ in the
// Format it parsed here; help and errors name the formats from the same list.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace chokepoint::report {

enum class Format : uint8_t { kText, kJson, kMarkdown, kHtml };

// "text", "json", "md", "html".
std::string_view format_name(Format f);

// The formats of each command, in the order help lists them.
inline constexpr Format kAnalyzeFormats[] = {Format::kText, Format::kJson, Format::kMarkdown, Format::kHtml};
inline constexpr Format kDiffFormats[] = {Format::kText, Format::kJson, Format::kMarkdown, Format::kHtml};
inline constexpr Format kKernelsFormats[] = {Format::kText, Format::kJson, Format::kMarkdown};
inline constexpr Format kTuneFormats[] = {Format::kText, Format::kJson, Format::kMarkdown};
inline constexpr Format kDoctorFormats[] = {Format::kText, Format::kJson};
inline constexpr Format kBenchFormats[] = {Format::kText, Format::kJson};

// The format called `name` ("md" or "markdown" for Markdown) among `offered`; a usage
// error otherwise: "unknown format 'x' (use text, json, md)" or "'html' is not a format
// of this command (use text, json)".
Result<Format> parse_format(std::string_view name, std::span<const Format> offered);

// "text, json, md"; with aliases, "text, json, md (markdown)".
std::string format_names(std::span<const Format> offered, bool aliases = false);

}  // namespace chokepoint::report
