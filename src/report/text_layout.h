// Terminal layout helpers for the human views: widths counted in characters rather than
// bytes (bars and dashes are UTF-8), padding, word wrapping and bars. The styling is
// report/style.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/style.h"

namespace chokepoint::report {

// Columns `s` occupies: one per UTF-8 code point (every glyph the reporters use is
// single-width).
size_t display_width(std::string_view s);
std::string pad_right(std::string_view s, size_t width);
std::string pad_left(std::string_view s, size_t width);

// `text` split into lines at spaces: the first line at most `first_width` columns (it
// follows a label), the others at most `width`; '\n' starts a new line. A word longer
// than the line gets a line of its own rather than being cut.
std::vector<std::string> wrap(std::string_view text, size_t first_width, size_t width);

// Like wrap(), for a list shown as "a · b · c": lines break only between items.
std::vector<std::string> wrap_items(const std::vector<std::string>& items, size_t first_width, size_t width);

// A horizontal bar of `width` cells, `pct` (0..100) of them filled.
std::string bar(double pct, size_t width);

}  // namespace chokepoint::report
