#include "pipeline/burst_steps.h"

#include <filesystem>
#include <system_error>

#include "pipeline/inputs.h"

namespace chokepoint::pipeline {

namespace fs = std::filesystem;

BurstLoop BurstLoopReader::read(const std::string& dir, const std::vector<samples::StackBurst>& bursts) {
  BurstLoop out;
  std::vector<analyses::LoopSteps> parts;
  for (const auto& b : bursts) {
    auto it = read_.find(b.file);
    if (it == read_.end()) {
      analyses::LoopSteps l;
      std::error_code ec;
      const fs::path path = fs::path(dir) / b.file;
      uintmax_t size = fs::file_size(path, ec);
      if (ec) size = fs::file_size(fs::path(path) += ".gz", ec);
      if (ec || size > max_bytes_) {
        l.why_not = "burst " + b.file + (ec ? " could not be read" : " is too large to read while the job runs");
      } else if (auto st = read_stack_file(dir, b.file, b.origin_ns); st.ok()) {
        st.value().rate_hz = b.rate_hz;
        l = analyses::find_loop_steps(st.value());
      }
      it = read_.emplace(b.file, std::move(l)).first;
    }
    parts.push_back(it->second);
  }
  if (parts.empty()) return out;
  out.loop_in_last = parts.back().found;
  out.steps = analyses::combine_loop_steps(parts);
  out.sure = out.steps.sure();
  return out;
}

}  // namespace chokepoint::pipeline
