#include "timeline/step_name.h"

#include <cctype>

namespace chokepoint::timeline {

namespace {

bool consume(std::string_view& s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != word[i]) return false;
  }
  s.remove_prefix(word.size());
  return true;
}

bool is_sep(char c) { return c == ' ' || c == '_' || c == '#' || c == ':' || c == '=' || c == '-' || c == '.'; }

}  // namespace

bool step_range_number(std::string_view name, int64_t* number) {
  std::string_view s = name;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!consume(s, "profilerstep")) {
    if (consume(s, "training") || consume(s, "train")) {
      while (!s.empty() && is_sep(s.front())) s.remove_prefix(1);
    }
    if (!consume(s, "step") && !consume(s, "iteration") && !consume(s, "iter")) return false;
  }
  // Then nothing, or separators and digits only.
  while (!s.empty() && is_sep(s.front())) s.remove_prefix(1);
  if (s.empty()) {
    *number = -1;
    return true;
  }
  if (s.size() > 18) return false;
  int64_t n = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    n = n * 10 + (c - '0');
  }
  *number = n;
  return true;
}

}  // namespace chokepoint::timeline
