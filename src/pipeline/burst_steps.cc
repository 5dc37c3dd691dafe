#include "pipeline/burst_steps.h"

#include "pipeline/inputs.h"

namespace chokepoint::pipeline {

BurstLoop BurstLoopReader::read(const std::string& dir, const std::vector<samples::StackBurst>& bursts) {
  BurstLoop out;
  std::vector<analyses::LoopSteps> parts;
  for (const auto& b : bursts) {
    auto it = read_.find(b.file);
    if (it == read_.end()) {
      analyses::LoopSteps l;
      if (auto st = read_stack_file(dir, b.file, b.origin_ns); st.ok()) {
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
