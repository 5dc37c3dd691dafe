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
  std::map<timeline::StringId, int32_t> frame_of_name;
  std::map<std::vector<int32_t>, int32_t> stack_ids;
  auto frame = [&](timeline::StringId name) {
    auto [it, fresh] = frame_of_name.emplace(name, static_cast<int32_t>(out.frames.size()));
    if (fresh) out.frames.push_back(frame_of_python_function(tl.strings.view(name)));
    return it->second;
  };
  for (auto& [key, rows] : by_thread) {
    const auto th = static_cast<int32_t>(out.threads.size());
    out.threads.push_back({key.first, key.second, ""});
    // Outer ranges first at equal starts.
    std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
      return c.start[a] != c.start[b] ? c.start[a] < c.start[b] : c.end[a] > c.end[b];
    });
    std::vector<uint32_t> open;  // outermost first
    timeline::TimeNs t = c.start[rows.front()];
    auto emit = [&](timeline::TimeNs until) {
      if (until > t && !open.empty()) {
        std::vector<int32_t> st;
        for (auto it = open.rbegin(); it != open.rend(); ++it) st.push_back(frame(c.name[*it]));
        auto [sit, fresh] = stack_ids.emplace(st, static_cast<int32_t>(out.stacks.size()));
        if (fresh) out.stacks.push_back(std::move(st));
        if (!out.segments.empty() && out.segments.back().thread == th && out.segments.back().stack == sit->second &&
            out.segments.back().end_ns == t) {
          out.segments.back().end_ns = until;
        } else {
          out.segments.push_back({th, sit->second, t, until});
        }
      }
      t = std::max(t, until);
    };
    auto close_until = [&](timeline::TimeNs when) {
      // Close every open range that ends by `when`, innermost first.
      while (!open.empty()) {
        // The innermost open range ends first when ranges nest; a range that does not nest
        // (clock jitter) is closed when its parent is.
        const timeline::TimeNs e = c.end[open.back()];
        if (e > when) break;
        emit(e);
        open.pop_back();
      }
    };
    for (uint32_t r : rows) {
      close_until(c.start[r]);
      emit(c.start[r]);
      open.push_back(r);
    }
    close_until(INT64_MAX);
  }
  return out;
}

}  // namespace chokepoint::analyses
