#include "exporters/prometheus_text.h"

#include <charconv>
#include <cmath>

#include "base/terminal_text.h"

namespace chokepoint::exporters {
namespace {

bool name_char(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

bool valid_name(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0, colon)) return false;
  }
  return true;
}

// The longest prefix of `s` of at most `n` bytes that does not end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, size_t n) {
  if (s.size() <= n) return s;
  size_t end = n;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

void append_help(std::string& out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace

bool valid_metric_name(std::string_view name) { return valid_name(name, true); }

bool valid_label_name(std::string_view name) { return valid_name(name, false) && name.substr(0, 2) != "__"; }

void append_label_value(std::string& out, std::string_view v, size_t max_bytes) {
  const std::string_view cut = utf8_prefix(v, max_bytes);
  std::string safe = escape_controls(cut);
  if (cut.size() < v.size()) safe += "...";
  for (char c : safe) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
}

void append_sample_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
  }
}

void PromWriter::family(std::string_view name, PromType type, std::string_view help) {
  const std::string key(name);
  if (index_.count(key) != 0) return;
  Family f;
  f.name = key;
  f.header = "# HELP " + key + " ";
  append_help(f.header, help);
  f.header += "\n# TYPE " + key + (type == PromType::kCounter ? " counter\n" : " gauge\n");
  index_.emplace(key, families_.size());
  families_.push_back(std::move(f));
}

bool PromWriter::sample(std::string_view family, const std::vector<PromLabel>& labels, double value) {
  const auto it = index_.find(std::string(family));
  if (it == index_.end() || !valid_metric_name(family)) {
    ++rejected_;
    return false;
  }
  labels_.clear();
  for (const PromLabel& l : labels) {
    if (!valid_label_name(l.name)) {
      ++rejected_;
      return false;
    }
    labels_ += labels_.empty() ? "{" : ",";
    labels_.append(l.name);
    labels_ += "=\"";
    append_label_value(labels_, l.value);
    labels_ += '"';
  }
  if (!labels_.empty()) labels_ += '}';
  Family& f = families_[it->second];
  if (!f.label_sets.insert(labels_).second) {
    ++rejected_;
    return false;
  }
  f.body += f.name;
  f.body += labels_;
  f.body += ' ';
  append_sample_value(f.body, value);
  f.body += '\n';
  return true;
}

std::string PromWriter::text() const {
  size_t n = 0;
  for (const Family& f : families_) n += f.header.size() + f.body.size();
  std::string out;
  out.reserve(n);
  for (const Family& f : families_) {
    out += f.header;
    out += f.body;
  }
  return out;
}

}  // namespace chokepoint::exporters
