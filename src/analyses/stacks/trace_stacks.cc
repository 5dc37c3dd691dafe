#include "analyses/stacks/trace_stacks.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace chokepoint::analyses {

samples::PyFrame frame_of_python_function(std::string_view n) {
  samples::PyFrame f;
  if (n.rfind("<built-in ", 0) == 0) {
    // "<built-in method item of Tensor object at 0x..>", "<built-in function _cuda_synchronize>"
    std::string_view rest = n.substr(10);
    for (std::string_view kind : {"method ", "function "}) {
      if (rest.rfind(kind, 0) == 0) rest.remove_prefix(kind.size());
    }
    const size_t end = rest.find_first_of(" >");
    f.function = std::string(rest.substr(0, end));
    f.file = "<built-in>";
    return f;
  }
  if (n.rfind("nn.Module: ", 0) == 0) {
    std::string_view m = n.substr(11);
    if (const size_t u = m.rfind('_'); u != std::string_view::npos) m = m.substr(0, u);
    f.function = std::string(m);
    f.file = "<nn.Module>";
    return f;
  }
  // "file(line): function"
  const size_t colon = n.find("): ");
  const size_t open = colon == std::string_view::npos ? std::string_view::npos : n.rfind('(', colon);
  if (open != std::string_view::npos) {
    int line = 0;
    const auto r = std::from_chars(n.data() + open + 1, n.data() + colon, line);
    if (r.ec == std::errc() && r.ptr == n.data() + colon) {
      f.file = std::string(n.substr(0, open));
      f.line = line;
      f.function = std::string(n.substr(colon + 3));
      return f;
    }
  }
  f.function = std::string(n);
  f.file = "<unknown>";
  return f;
}

namespace {

// Builds the stacks of `out` from each thread's python_function ranges: a sweep over the
// ranges in start order keeps the open ones, and each stretch between two boundaries is a
// segment on the stack of the ranges open then.
class StackSweep {
 public:
  StackSweep(const timeline::Timeline& tl, samples::PyStacks& out) : tl_(tl), c_(tl.cpu_ranges), out_(out) {}

  // Adds the thread (pid, tid) whose ranges are `rows` (sorted here).
  void add_thread(std::pair<int32_t, int32_t> key, std::vector<uint32_t>& rows) {
    th_ = static_cast<int32_t>(out_.threads.size());
    out_.threads.push_back({key.first, key.second, ""});
    // Outer ranges first at equal starts.
    std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
      return c_.start[a] != c_.start[b] ? c_.start[a] < c_.start[b] : c_.end[a] > c_.end[b];
    });
    open_.clear();
    t_ = c_.start[rows.front()];
    for (uint32_t r : rows) {
      close_until(c_.start[r]);
      emit(c_.start[r]);
      open_.push_back(r);
    }
    close_until(INT64_MAX);
  }

 private:
  int32_t frame(timeline::StringId name) {
    auto [it, fresh] = frame_of_name_.emplace(name, static_cast<int32_t>(out_.frames.size()));
    if (fresh) out_.frames.push_back(frame_of_python_function(tl_.strings.view(name)));
    return it->second;
  }

  // The id of the stack of the open ranges, innermost first.
  int32_t open_stack() {
    std::vector<int32_t> st;
    for (auto it = open_.rbegin(); it != open_.rend(); ++it) st.push_back(frame(c_.name[*it]));
    auto [sit, fresh] = stack_ids_.emplace(st, static_cast<int32_t>(out_.stacks.size()));
    if (fresh) out_.stacks.push_back(std::move(st));
    return sit->second;
  }

  // The open stack from t_ until `until` becomes a segment (extending the last one when it
  // continues it).
  void emit(timeline::TimeNs until) {
    if (until > t_ && !open_.empty()) {
      const int32_t stack = open_stack();
      if (!out_.segments.empty() && out_.segments.back().thread == th_ && out_.segments.back().stack == stack &&
          out_.segments.back().end_ns == t_) {
        out_.segments.back().end_ns = until;
      } else {
        out_.segments.push_back({th_, stack, t_, until});
      }
    }
    t_ = std::max(t_, until);
  }

  // Closes every open range that ends by `when`, innermost first.
  void close_until(timeline::TimeNs when) {
    while (!open_.empty()) {
      // The innermost open range ends first when ranges nest; a range that does not nest
      // (clock jitter) is closed when its parent is.
      const timeline::TimeNs e = c_.end[open_.back()];
      if (e > when) break;
      emit(e);
      open_.pop_back();
    }
  }

  const timeline::Timeline& tl_;
  const timeline::CpuRanges& c_;
  samples::PyStacks& out_;
  std::map<timeline::StringId, int32_t> frame_of_name_;
  std::map<std::vector<int32_t>, int32_t> stack_ids_;
  int32_t th_ = 0;
  std::vector<uint32_t> open_;  // outermost first
  timeline::TimeNs t_ = 0;
};

}  // namespace

samples::PyStacks python_stacks_from_trace(const timeline::Timeline& tl) {
  samples::PyStacks out;
  const auto& c = tl.cpu_ranges;
  // Per thread, its python_function ranges.
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_thread;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.category[i] == timeline::CpuCategory::kPythonFunction && c.end[i] > c.start[i]) {
      by_thread[{c.pid[i], c.tid[i]}].push_back(static_cast<uint32_t>(i));
    }
  }
  if (by_thread.empty()) return out;
  out.source = "trace python_function";
  StackSweep sweep(tl, out);
  for (auto& [key, rows] : by_thread) sweep.add_thread(key, rows);
  return out;
}

}  // namespace chokepoint::analyses
