#include "report/text_layout.h"

#include <algorithm>
#include <cmath>

namespace chokepoint::report {

size_t display_width(std::string_view s) {
  // Count every byte that does not continue a multi-byte sequence (10xxxxxx).
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad_right(std::string_view s, size_t width) {
  const size_t w = display_width(s);
  return std::string(s) + std::string(w < width ? width - w : 0, ' ');
}

std::string pad_left(std::string_view s, size_t width) {
  const size_t w = display_width(s);
  return std::string(w < width ? width - w : 0, ' ') + std::string(s);
}

std::vector<std::string> wrap(std::string_view text, size_t first_width, size_t width) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view paragraph = text.substr(start, nl - start);
    std::string line;
    size_t pos = 0;
    while (pos < paragraph.size()) {
      const size_t word_start = paragraph.find_first_not_of(' ', pos);
      if (word_start == std::string_view::npos) break;
      size_t word_end = paragraph.find(' ', word_start);
      if (word_end == std::string_view::npos) word_end = paragraph.size();
      const std::string_view word = paragraph.substr(word_start, word_end - word_start);
      const size_t limit = lines.empty() ? first_width : width;
      if (!line.empty() && display_width(line) + 1 + display_width(word) > limit) {
        lines.push_back(std::move(line));
        line.clear();
      }
      if (!line.empty()) line += ' ';
      line += word;
      pos = word_end;
    }
    lines.push_back(std::move(line));
    start = nl + 1;
  }
  return lines;
}

std::vector<std::string> wrap_items(const std::vector<std::string>& items, size_t first_width, size_t width) {
  constexpr std::string_view kSeparator = " · ";
  std::vector<std::string> lines;
  std::string line;
  for (const std::string& item : items) {
    const size_t limit = lines.empty() ? first_width : width;
    if (!line.empty() && display_width(line) + display_width(kSeparator) + display_width(item) > limit) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line += kSeparator;
    line += item;
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

std::string bar(double pct, size_t width) {
  const double share = std::isfinite(pct) ? std::clamp(pct / 100.0, 0.0, 1.0) : 0.0;
  const auto filled = static_cast<size_t>(std::lround(share * static_cast<double>(width)));
  std::string out;
  for (size_t i = 0; i < width; ++i) out += i < filled ? "█" : "░";
  return out;
}

}  // namespace chokepoint::report
