// A regular expression from the user (`tune --metric`, `--memory-metric`) run on a
// linear-time engine, RE2: the time to scan a line grows with the line, whatever the
// pattern. std::regex backtracks: "(a+)+$" hung `tune` for good, and ".*samples/s: ..." on
// a 200,000-character line overflowed the stack (issue 47). RE2's syntax is Perl's without
// backreferences and lookaround, which a pattern for a printed number does not need.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace re2 {
class RE2;
}

namespace chokepoint::tune {

class Pattern {
 public:
  // The compiled pattern, or a usage error that says what is wrong with `text`.
  static Result<Pattern> compile(const std::string& text);

  // What the pattern finds first in `line`: its group 1 when it has one and that group
  // took part in the match, else the whole match; nullopt when it does not match.
  std::optional<std::string> find(std::string_view line) const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace chokepoint::tune
