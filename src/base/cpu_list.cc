#include "base/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "base/text.h"

namespace chokepoint {
namespace {

bool parse_uint(std::string_view s, unsigned* out) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view text) {
  text = trim(text);
  std::vector<unsigned> cpus;
  constexpr unsigned kMaxCpu = 1u << 16;  // sanity bound against garbage like "0-4000000000"
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t dash = item.find('-');
    unsigned lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!parse_uint(item, &lo)) return std::nullopt;
      hi = lo;
    } else if (!parse_uint(item.substr(0, dash), &lo) || !parse_uint(item.substr(dash + 1), &hi) || hi < lo) {
      return std::nullopt;
    }
    if (hi >= kMaxCpu) return std::nullopt;
    for (unsigned c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

std::vector<unsigned> intersect_cpus(const std::vector<unsigned>& a, const std::vector<unsigned>& b) {
  std::vector<unsigned> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace chokepoint
