#include "importers/pyspy/pyspy_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include "importers/input/byte_source.h"

namespace chokepoint::importers {

namespace {

namespace od = simdjson::ondemand;

// A py-spy file over this is not a recording of a job (a day at 100 Hz, 16 threads and a
// new stack every sample is ~3 GB): refuse it rather than exhaust memory.
constexpr uint64_t kMaxBytes = 4ull << 30;

struct ThreadState {
  int32_t thread = -1;         // index into PyStacks::threads, -1 until named
  std::vector<int32_t> stack;  // frame ids, outermost first (user frames only)
  std::vector<bool> is_root;   // per pushed B: an identity frame, not a frame
  int64_t last_ts = -1;        // ts of the state `stack` holds
  int64_t pid = 0;
  std::string process_frame, thread_frame;
};

struct Builder {
  samples::PyStacks out;
  std::map<samples::PyFrame, int32_t> frame_ids;
  std::map<std::vector<int32_t>, int32_t> stack_ids;
  std::map<std::pair<int64_t, uint64_t>, ThreadState> threads;  // (pid, chrometrace tid)
  std::vector<samples::PyStackSegment> segs;
  int64_t origin_ns = 0;

  int32_t frame_id(std::string_view fn, std::string_view file, int64_t line) {
    samples::PyFrame f{std::string(fn), std::string(file),
                       static_cast<int32_t>(std::clamp<int64_t>(line, 0, INT32_MAX))};
    auto [it, fresh] = frame_ids.emplace(f, static_cast<int32_t>(out.frames.size()));
    if (fresh) out.frames.push_back(std::move(f));
    return it->second;
  }

  int32_t stack_id(const std::vector<int32_t>& outer_first) {
    std::vector<int32_t> inner_first(outer_first.rbegin(), outer_first.rend());
    auto [it, fresh] = stack_ids.emplace(inner_first, static_cast<int32_t>(out.stacks.size()));
    if (fresh) out.stacks.push_back(std::move(inner_first));
    return it->second;
  }

  // "thread (4242): MainThread" / "thread (0x7f..)" -> tid, name.
  static void parse_thread(std::string_view s, int64_t* tid, std::string* name) {
    const auto open = s.find('('), close = s.find(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
    const std::string num(s.substr(open + 1, close - open - 1));
    char* end = nullptr;
    const long long v = std::strtoll(num.c_str(), &end, num.rfind("0x", 0) == 0 ? 16 : 10);
    if (end != nullptr && *end == '\0' && v > 0 && v < (1ll << 31)) *tid = v;  // hex: a pthread id, not a tid
    if (close + 1 < s.size()) {
      std::string_view rest = s.substr(close + 1);
      if (!rest.empty() && rest[0] == ':') rest.remove_prefix(1);
      while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
      *name = std::string(rest);
    }
  }

  int32_t thread_of(ThreadState& st) {
    if (st.thread >= 0) return st.thread;
    samples::PyThread t;
    t.pid = st.pid;
    parse_thread(st.thread_frame, &t.tid, &t.name);
    // Two chrometrace threads naming the same OS thread (a pthread id reused) are one.
    for (size_t i = 0; i < out.threads.size(); ++i) {
      if (out.threads[i].pid == t.pid && t.tid != 0 && out.threads[i].tid == t.tid) {
        if (out.threads[i].name.empty()) out.threads[i].name = t.name;  // named after it started
        return st.thread = static_cast<int32_t>(i);
      }
    }
    st.thread = static_cast<int32_t>(out.threads.size());
    out.threads.push_back(std::move(t));
    return st.thread;
  }

  // The state held since st.last_ts ends at ts.
  void close(ThreadState& st, int64_t ts) {
    if (st.last_ts < 0 || ts <= st.last_ts || st.stack.empty()) return;
    const int32_t th = thread_of(st);
    const int32_t sk = stack_id(st.stack);
    const int64_t a = origin_ns + st.last_ts * 1000, b = origin_ns + ts * 1000;
    if (!segs.empty() && segs.back().thread == th && segs.back().stack == sk && segs.back().end_ns == a) {
      segs.back().end_ns = b;
    } else {
      segs.push_back({th, sk, a, b});
    }
  }
};

// The fields of one chrometrace event that matter here.
struct PySpyEvent {
  std::string_view ph, name, file;
  int64_t pid = 0, line = 0;
  uint64_t tid = 0;
  double ts = -1;
};

// The event's args: its source file and line. False when they would not parse.
bool read_args(od::value& v, PySpyEvent& e) {
  od::object args;
  if (v.get_object().get(args) != simdjson::SUCCESS) return false;
  for (auto af : args) {
    std::string_view ak;
    if (af.unescaped_key().get(ak) != simdjson::SUCCESS) return false;
    if (ak == "filename") {
      if (af.value().get_string().get(e.file) != simdjson::SUCCESS) e.file = {};
    } else if (ak == "line") {
      int64_t l = 0;
      if (af.value().get_int64().get(l) == simdjson::SUCCESS) e.line = l;  // null: no line numbers
    }
  }
  return true;
}

// One event's fields, in any order; unknown ones ignored. False when a value would not
// parse (the document may be cut inside this event).
bool read_event(od::object& ev, PySpyEvent& e) {
  for (auto field : ev) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return false;
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) return false;
    simdjson::error_code err = simdjson::SUCCESS;
    if (key == "ph") {
      err = v.get_string().get(e.ph);
    } else if (key == "name") {
      err = v.get_string().get(e.name);
    } else if (key == "pid") {
      err = v.get_int64().get(e.pid);
    } else if (key == "tid") {
      err = v.get_uint64().get(e.tid);
    } else if (key == "ts") {
      err = v.get_double().get(e.ts);
    } else if (key == "args" && !read_args(v, e)) {
      return false;
    }
    if (err != simdjson::SUCCESS) return false;
  }
  return true;
}

// A Begin: the process and thread identity frames (outermost, no file) name the thread;
// any other frame is pushed on its stack.
void begin_frame(Builder& b, ThreadState& st, const PySpyEvent& e) {
  const bool identity = e.file.empty() && e.line == 0 &&
                        (e.name.rfind("process ", 0) == 0 || e.name.rfind("thread (", 0) == 0);
  if (!identity) {
    st.stack.push_back(b.frame_id(e.name, e.file, e.line));
    st.is_root.push_back(false);
    return;
  }
  if (e.name.rfind("thread (", 0) == 0) {
    st.thread_frame = std::string(e.name);
    st.thread = -1;  // (re)resolved on the next segment
  } else {
    st.process_frame = std::string(e.name);
  }
  st.is_root.push_back(true);
}

// An End pops what its Begin pushed; false for an End without its Begin.
bool end_frame(ThreadState& st) {
  if (st.is_root.empty()) return false;
  const bool root = st.is_root.back();
  st.is_root.pop_back();
  if (!root && !st.stack.empty()) st.stack.pop_back();
  return true;
}

// Applies one Begin or End event to its thread's stack; others are skipped.
void apply_event(Builder& b, const PySpyEvent& e, PySpyReadStats& stats) {
  if ((e.ph != "B" && e.ph != "E") || e.name.empty() || e.ts < 0 || e.ts > 1e15) {
    ++stats.skipped;
    return;
  }
  ThreadState& st = b.threads[{e.pid, e.tid}];
  st.pid = e.pid;
  // Time never goes back within a thread (py-spy's own clock is monotonic; a damaged
  // file's is not): a late event counts at the thread's current time.
  const auto t = std::max(static_cast<int64_t>(e.ts), st.last_ts);
  if (t != st.last_ts) {
    b.close(st, t);
    st.last_ts = t;
  }
  if (e.ph == "B") {
    begin_frame(b, st, e);
  } else if (!end_frame(st)) {
    ++stats.skipped;  // an End without its Begin
  }
}

Status parse_events(od::array events, Builder& b, PySpyReadStats& stats) {
  for (auto item : events) {
    od::object ev;
    PySpyEvent e;
    if (item.get_object().get(ev) != simdjson::SUCCESS || !read_event(ev, e)) {
      // The array was cut off, a non-object, or a value that would not parse: stop here.
      stats.truncated = true;
      break;
    }
    ++stats.events;
    apply_event(b, e, stats);
  }
  return Status::Ok();
}

}  // namespace

Result<samples::PyStacks> parse_pyspy_chrometrace(std::string_view json, int64_t origin_ns, PySpyReadStats* stats_out) {
  PySpyReadStats stats;
  // A file cut short (py-spy killed while writing its one line): keep the whole events
  // before the cut and close the array there.
  std::string repaired;
  size_t end = json.find_last_not_of(" \t\r\n");
  if (end != std::string_view::npos && json[end] != ']' && json.find('[') != std::string_view::npos) {
    size_t cut = 0;
    for (std::string_view sep : {"},{", "},\n{"}) {
      const size_t at = json.rfind(sep);
      if (at != std::string_view::npos) cut = std::max(cut, at);
    }
    if (cut > 0) {
      repaired.assign(json.substr(0, cut + 1));
      repaired += ']';
      json = repaired;
      stats.truncated = true;
    }
  }
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return Status::Error("py-spy output: not JSON");
  od::array events;
  if (doc.get_array().get(events) != simdjson::SUCCESS) {
    return Status::Error("py-spy output: not a chrometrace event array (record with --format chrometrace)");
  }
  Builder b;
  b.origin_ns = origin_ns;
  if (Status s = parse_events(events, b, stats); !s.ok()) return s;
  // Threads still holding a stack at the end (a cut file): their last state has no end.
  std::stable_sort(b.segs.begin(), b.segs.end(), [](const auto& x, const auto& y) {
    return x.thread != y.thread ? x.thread < y.thread : x.start_ns < y.start_ns;
  });
  // One OS thread seen under two chrometrace ids (a reused pthread id) may overlap itself:
  // a thread is on one stack at a time, the earlier segment keeps the overlap.
  std::vector<samples::PyStackSegment> segs;
  segs.reserve(b.segs.size());
  for (auto g : b.segs) {
    if (!segs.empty() && segs.back().thread == g.thread && g.start_ns < segs.back().end_ns) {
      g.start_ns = segs.back().end_ns;
      if (g.end_ns <= g.start_ns) {
        ++stats.skipped;
        continue;
      }
    }
    segs.push_back(g);
  }
  b.out.segments = std::move(segs);
  b.out.source = "py-spy";
  if (stats_out != nullptr) *stats_out = stats;
  return std::move(b.out);
}

Result<samples::PyStacks> read_pyspy_chrometrace(const std::string& path, int64_t origin_ns, PySpyReadStats* stats) {
  auto src = open_file(path);
  if (!src.ok()) return src.status();
  std::string text;
  std::vector<char> buf(1 << 20);
  for (;;) {
    auto n = src.value()->read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (n.value() == 0) break;
    if (text.size() + n.value() > kMaxBytes) return Status::Error(path + ": py-spy output over 4 GiB; not read");
    text.append(buf.data(), n.value());
  }
  return parse_pyspy_chrometrace(text, origin_ns, stats);
}

}  // namespace chokepoint::importers
