// -f,--format, the same for every command: the names come from report/formats.h.
#include <string>

#include "cli/commands.h"

namespace chokepoint::cli {

CLI::Option* add_format_option(CLI::App* cmd, std::string* format, std::span<const report::Format> offered,
                               const std::string& help, const MoreFormats& more) {
  const CLI::Validator known(
      [offered, more](std::string& value) -> std::string {
        if (more.accepts && more.accepts(value)) return "";
        auto f = report::parse_format(value, offered);
        if (f.ok()) return "";
        if (more.names.empty()) return f.status().message();
        return "unknown format '" + value + "' (use " + report::format_names(offered) + ", " + more.names + ")";
      },
      "", "FORMAT");
  return cmd->add_option("-f,--format", *format, help)->check(known)->capture_default_str();
}

}  // namespace chokepoint::cli
