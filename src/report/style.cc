#include "report/style.h"

namespace chokepoint::report {

std::string Style::operator()(Tone tone, std::string_view s) const {
  if (!color_ || s.empty()) return std::string(s);
  const char* code = "";
  switch (tone) {
    case Tone::kBold: code = "\x1b[1m"; break;
    case Tone::kDim: code = "\x1b[2m"; break;
    case Tone::kRed: code = "\x1b[1;31m"; break;
    case Tone::kYellow: code = "\x1b[33m"; break;
    case Tone::kCyan: code = "\x1b[36m"; break;
    case Tone::kGreen: code = "\x1b[32m"; break;
    case Tone::kRedBench: code = "\x1b[31;1m"; break;
  }
  return std::string(code) + std::string(s) + "\x1b[0m";
}

}  // namespace chokepoint::report
