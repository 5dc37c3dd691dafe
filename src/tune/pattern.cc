#include "tune/pattern.h"

#include <re2/re2.h>

#include <vector>

#include "base/terminal_text.h"

namespace chokepoint::tune {

Result<Pattern> Pattern::compile(const std::string& text) {
  RE2::Options opt;
  opt.set_log_errors(false);  // the error is ours to say, once
  auto re = std::make_shared<const RE2>(text, opt);
  if (!re->ok()) {
    return Status::Error(ErrorCode::kUsage,
                         "'" + escape_controls(text) +
                             "' is not a regular expression (RE2 syntax: " + escape_controls(re->error()) + ")");
  }
  Pattern p;
  p.text_ = text;
  p.re_ = std::move(re);
  return p;
}

std::optional<std::string> Pattern::find(std::string_view line) const {
  if (!re_) return std::nullopt;
  const int groups = std::min(re_->NumberOfCapturingGroups(), 1);
  std::vector<re2::StringPiece> m(static_cast<size_t>(groups) + 1);
  if (!re_->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, m.data(),
                  static_cast<int>(m.size()))) {
    return std::nullopt;
  }
  const re2::StringPiece& hit = groups == 1 && m[1].data() != nullptr ? m[1] : m[0];
  return std::string(hit.data(), hit.size());
}

}  // namespace chokepoint::tune
