#include "report/stat_listing.h"

#include <algorithm>

#include "base/stat_catalogue.h"

namespace chokepoint::report {

std::string format_stat_catalogue() {
  size_t name_w = 4, reader_w = 6;
  for (const StatDef& d : all_stats()) {
    name_w = std::max(name_w, d.name.size());
    reader_w = std::max(reader_w, d.reader.size());
  }
  auto pad = [](std::string_view s, size_t w) { return std::string(s) + std::string(w - s.size() + 2, ' '); };
  std::string out = pad("NAME", name_w) + pad("SEVERITY", 8) + pad("READER", reader_w) + "DESCRIPTION\n";
  for (const StatDef& d : all_stats()) {
    out += pad(d.name, name_w) + pad(severity_name(d.severity), 8) + pad(d.reader, reader_w) +
           stat_listing_description(d) + "\n";
  }
  out +=
      "\nReports list the stats an input raised (JSON: \"import_stats\"); <...> stands for what the "
      "reader fills in.\n";
  return out;
}

}  // namespace chokepoint::report
