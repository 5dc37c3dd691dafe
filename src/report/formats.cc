#include "report/formats.h"

#include <algorithm>

namespace chokepoint::report {
namespace {

struct FormatName {
  Format format;
  std::string_view name;
  std::string_view alias;  // "" none
};

constexpr FormatName kNames[] = {
    {Format::kText, "text", ""},
    {Format::kJson, "json", ""},
    {Format::kMarkdown, "md", "markdown"},
    {Format::kHtml, "html", ""},
};

const FormatName& entry(Format f) {
  return *std::find_if(std::begin(kNames), std::end(kNames), [f](const FormatName& n) { return n.format == f; });
}

}  // namespace

std::string_view format_name(Format f) { return entry(f).name; }

Result<Format> parse_format(std::string_view name, std::span<const Format> offered) {
  const auto* it = std::find_if(std::begin(kNames), std::end(kNames), [name](const FormatName& n) {
    return !name.empty() && (name == n.name || name == n.alias);
  });
  const std::string use = " (use " + format_names(offered) + ")";
  if (it == std::end(kNames))
    return Status::Error(ErrorCode::kUsage, "unknown format '" + std::string(name) + "'" + use);
  if (std::find(offered.begin(), offered.end(), it->format) == offered.end()) {
    return Status::Error(ErrorCode::kUsage, "'" + std::string(name) + "' is not a format of this command" + use);
  }
  return it->format;
}

std::string format_names(std::span<const Format> offered, bool aliases) {
  std::string s;
  for (const Format f : offered) {
    const FormatName& n = entry(f);
    if (!s.empty()) s += ", ";
    s += n.name;
    if (aliases && !n.alias.empty()) s.append(" (").append(n.alias).append(")");
  }
  return s;
}

}  // namespace chokepoint::report
