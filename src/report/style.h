// The one presentation vocabulary of every human view (the analyze/run report, doctor,
// bench): the options a renderer takes and the ANSI styling that disappears when colour
// is off. Machine formats (json, md) take the same options and ignore what they do not
// use.
#pragma once

#include <string>
#include <string_view>

namespace chokepoint::report {

struct RenderOptions {
  bool color = false;  // ANSI colour; the CLI sets it for a tty without NO_COLOR
  int width = 100;     // terminal width: text wraps at this many columns
  bool notes = false;  // also the method notes where a view has them (bench: each result's)
  // Also how long the analysis took (analyze --timings): off, the same input gives the
  // same report byte for byte.
  bool timings = false;
};

enum class Tone {
  kBold,
  kDim,
  kRed,  // bold red
  kYellow,
  kCyan,
  kGreen,
  // Looks as kRed does; bench's verdicts keep the bytes they always had ("\x1b[31;1m",
  // where kRed writes "\x1b[1;31m"), which its output test pins.
  kRedBench,
};

class Style {
 public:
  explicit Style(bool color) : color_(color) {}
  explicit Style(const RenderOptions& options) : color_(options.color) {}
  // `s` wrapped in the tone's escape sequence, or `s` itself without colour (or when
  // `s` is empty).
  std::string operator()(Tone tone, std::string_view s) const;
  bool color() const { return color_; }

 private:
  bool color_;
};

}  // namespace chokepoint::report
