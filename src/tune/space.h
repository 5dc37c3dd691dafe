// The search space of `chokepoint tune`: the --param NAME=VALUES of the command line,
// each a list of values in order, and the command with {NAME} placeholders that one
// configuration (an index into each parameter's values) turns into a trial's argv.
//
// VALUES: LO..HI integers (every one, or the powers of two from LO when HI/LO >= 8:
// batch=8..1024 is 8 16 ... 1024), LO..HI:STEP, or a list a,b,c. A parameter whose values
// are all numbers is ordered: the search treats it as a line (throughput unimodal along
// it); a list of words (amp=off,bf16) is tried value by value.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace chokepoint::tune {

struct Param {
  std::string name;
  std::vector<std::string> values;
  bool ordered = false;  // all values numbers, in the order given
};

// One configuration: an index into each parameter's values, in the parameters' order.
using Config = std::vector<size_t>;

struct Space {
  std::vector<Param> params;
  // The parameter whose values are the batch size (named "batch"-something, numeric), or
  // params.size() when none: it gets the out-of-memory search.
  size_t batch = 0;

  size_t grid_size() const;
  // "batch=64 workers=8 amp=bf16".
  std::string key(const Config& c) const;
  std::vector<std::pair<std::string, std::string>> assignment(const Config& c) const;
  // The configuration of an assignment (names and values as key() writes them); false
  // when a name or value is not in the space.
  bool find(const std::vector<std::pair<std::string, std::string>>& assignment, Config* out) const;
};

// One --param NAME=VALUES; an error says what is wrong with it.
Result<Param> parse_param(const std::string& text);

// The space of the parameters; `batch_name` names the batch parameter ("" to find one
// whose name contains "batch", "-" for none). Errors: duplicate names, a batch
// parameter that is not numeric.
Result<Space> make_space(std::vector<Param> params, const std::string& batch_name = "");

// The command's words with each {NAME} replaced by the configuration's value. Errors
// (from check_command) when a parameter is never used in the command.
std::vector<std::string> substitute(const std::vector<std::string>& command, const Space& s, const Config& c);
Status check_command(const std::vector<std::string>& command, const Space& s);

}  // namespace chokepoint::tune
