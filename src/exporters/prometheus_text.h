// The Prometheus text exposition format (version 0.0.4, what every Prometheus server
// scrapes): families with their # HELP and # TYPE lines, then one line per sample,
// `name{label="value",...} value`. The writer groups samples under their family whatever
// order they are added in (the format requires a family's lines to be contiguous), drops
// a second sample with the same labels (a scrape with duplicate series is rejected
// whole), and makes every label value safe: names of processes, commands and GPUs come
// from other people's programs, and a `"`, `\`, newline or invalid UTF-8 byte in one
// must not break the page (base/terminal_text.h escape_controls, then the format's own
// escapes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace chokepoint::exporters {

enum class PromType { kGauge, kCounter };

struct PromLabel {
  std::string_view name;
  std::string_view value;
};

// [a-zA-Z_:][a-zA-Z0-9_:]* (metric names) and [a-zA-Z_][a-zA-Z0-9_]* without a leading
// "__" (label names, that prefix is Prometheus's own).
bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);

// `v` as a label value, without the quotes: control characters and invalid UTF-8 made
// visible (escape_controls), then '\' and '"' escaped. `max_bytes` cuts long values
// (command lines) at a UTF-8 boundary, with "..." appended.
void append_label_value(std::string& out, std::string_view v, size_t max_bytes = 256);
// A sample value: shortest round-trip form, "NaN", "+Inf", "-Inf".
void append_sample_value(std::string& out, double v);

class PromWriter {
 public:
  // Declares a family (its HELP and TYPE lines come first in the page). A counter's name
  // ends in _total. Declaring the same name again is a no-op.
  void family(std::string_view name, PromType type, std::string_view help);
  // Adds a sample to a declared family. False (and nothing written) when the family was not
  // declared, a label name is invalid, or the same label set was already added.
  bool sample(std::string_view family, const std::vector<PromLabel>& labels, double value);

  // The page: families in declaration order, each with its samples in insertion order.
  // A family without a sample keeps its HELP and TYPE lines (valid, and it says which
  // series this exporter has, e.g. the GPU ones on a node without a GPU).
  std::string text() const;
  size_t rejected() const { return rejected_; }

 private:
  struct Family {
    std::string name;
    std::string header;  // # HELP, # TYPE
    std::string body;
    std::unordered_set<std::string> label_sets;
  };
  std::vector<Family> families_;
  std::unordered_map<std::string, size_t> index_;
  size_t rejected_ = 0;
  std::string labels_;  // scratch
};

}  // namespace chokepoint::exporters
