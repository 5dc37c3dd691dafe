#include "tune/space.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <set>

namespace chokepoint::tune {
namespace {

bool parse_int(const std::string& text, int64_t* out) {
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && p == end;
}

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  return ec == std::errc() && p == end;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// LO..HI or LO..HI:STEP into values; an error message when malformed ("" when fine).
std::string range_values(const std::string& text, std::vector<std::string>* values) {
  const size_t dots = text.find("..");
  std::string hi_text = text.substr(dots + 2), step_text;
  if (const size_t colon = hi_text.find(':'); colon != std::string::npos) {
    step_text = hi_text.substr(colon + 1);
    hi_text = hi_text.substr(0, colon);
  }
  int64_t lo = 0, hi = 0, step = 0;
  if (!parse_int(text.substr(0, dots), &lo) || !parse_int(hi_text, &hi) || lo > hi ||
      (!step_text.empty() && (!parse_int(step_text, &step) || step <= 0))) {
    return "'" + text + "' is not a range LO..HI or LO..HI:STEP of integers with LO <= HI";
  }
  if (step == 0 && lo > 0 && hi / lo >= 8) {
    for (int64_t v = lo; v <= hi; v *= 2) values->push_back(std::to_string(v));
  } else {
    for (int64_t v = lo; v <= hi; v += step == 0 ? 1 : step) values->push_back(std::to_string(v));
  }
  if (values->size() > 4096) return "'" + text + "' has more than 4096 values; give a STEP (LO..HI:STEP)";
  return "";
}

}  // namespace

size_t Space::grid_size() const {
  size_t n = 1;
  for (const Param& p : params) n *= p.values.size();
  return n;
}

std::vector<std::pair<std::string, std::string>> Space::assignment(const Config& c) const {
  std::vector<std::pair<std::string, std::string>> a;
  for (size_t i = 0; i < params.size(); ++i) a.emplace_back(params[i].name, params[i].values[c[i]]);
  return a;
}

std::string Space::key(const Config& c) const {
  std::string k;
  for (const auto& [name, value] : assignment(c)) k += (k.empty() ? "" : " ") + name + "=" + value;
  return k;
}

bool Space::find(const std::vector<std::pair<std::string, std::string>>& assignment, Config* out) const {
  if (assignment.size() != params.size()) return false;
  Config c(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (assignment[i].first != params[i].name) return false;
    const auto& v = params[i].values;
    const auto it = std::find(v.begin(), v.end(), assignment[i].second);
    if (it == v.end()) return false;
    c[i] = static_cast<size_t>(it - v.begin());
  }
  *out = c;
  return true;
}

Result<Param> parse_param(const std::string& text) {
  const size_t eq = text.find('=');
  Param p;
  p.name = eq == std::string::npos ? "" : text.substr(0, eq);
  const bool name_ok = !p.name.empty() && std::all_of(p.name.begin(), p.name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-';
  });
  if (!name_ok) {
    return Status::Error(ErrorCode::kUsage, "--param '" + text +
                                                "' is not NAME=VALUES (e.g. batch=8..1024, workers=0..16, "
                                                "amp=off,bf16; NAME of letters, digits, _ and -)");
  }
  const std::string values = text.substr(eq + 1);
  if (values.find("..") != std::string::npos) {
    if (std::string error = range_values(values, &p.values); !error.empty()) {
      return Status::Error(ErrorCode::kUsage, "--param " + p.name + ": " + error);
    }
  } else {
    size_t start = 0;
    for (;;) {
      const size_t comma = values.find(',', start);
      p.values.push_back(values.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  std::set<std::string> seen;
  for (const std::string& v : p.values) {
    if (v.empty() || !seen.insert(v).second) {
      return Status::Error(ErrorCode::kUsage,
                           "--param " + p.name + ": '" + values + "' has an empty or repeated value");
    }
  }
  p.ordered = std::all_of(p.values.begin(), p.values.end(), is_number);
  return p;
}

Result<Space> make_space(std::vector<Param> params, const std::string& batch_name) {
  Space s;
  s.params = std::move(params);
  s.batch = s.params.size();
  std::set<std::string> names;
  for (size_t i = 0; i < s.params.size(); ++i) {
    if (!names.insert(s.params[i].name).second) {
      return Status::Error(ErrorCode::kUsage, "--param " + s.params[i].name + " is given twice");
    }
    const bool named = batch_name.empty() ? lower(s.params[i].name).find("batch") != std::string::npos
                                          : s.params[i].name == batch_name;
    if (named && s.batch == s.params.size()) s.batch = i;
  }
  if (!batch_name.empty() && batch_name != "-" && s.batch == s.params.size()) {
    return Status::Error(ErrorCode::kUsage, "--batch-param " + batch_name + " is not one of the --param names");
  }
  if (s.batch < s.params.size() && !s.params[s.batch].ordered) {
    if (!batch_name.empty()) {
      return Status::Error(ErrorCode::kUsage, "the batch parameter " + batch_name + " must have numeric values");
    }
    s.batch = s.params.size();  // a word list named "batch...": no out-of-memory search
  }
  return s;
}

std::vector<std::string> substitute(const std::vector<std::string>& command, const Space& s, const Config& c) {
  std::vector<std::string> argv = command;
  for (std::string& word : argv) {
    for (size_t i = 0; i < s.params.size(); ++i) {
      const std::string hole = "{" + s.params[i].name + "}";
      for (size_t at = word.find(hole); at != std::string::npos; at = word.find(hole, at)) {
        word.replace(at, hole.size(), s.params[i].values[c[i]]);
        at += s.params[i].values[c[i]].size();
      }
    }
  }
  return argv;
}

Status check_command(const std::vector<std::string>& command, const Space& s) {
  if (command.empty()) return Status::Error(ErrorCode::kUsage, "no command to tune: give it after --");
  for (const Param& p : s.params) {
    const std::string hole = "{" + p.name + "}";
    const bool used = std::any_of(command.begin(), command.end(),
                                  [&](const std::string& w) { return w.find(hole) != std::string::npos; });
    if (!used) {
      return Status::Error(ErrorCode::kUsage, "--param " + p.name + " is never used in the command: put " + hole +
                                                  " where its value goes (e.g. --batch-size " + hole + ")");
    }
  }
  return Status::Ok();
}

}  // namespace chokepoint::tune
