#include "samples/meta_json.h"

#include <charconv>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace chokepoint::samples {
namespace {

using nlohmann::json;

template <typename T>
struct IsVector : std::false_type {};
template <typename U>
struct IsVector<std::vector<U>> : std::true_type {};

// Whether `j` converts to T without undefined behaviour: nlohmann casts a floating-point
// number to an integer type unchecked (1.8e25 as an unsigned CPU id, found by
// fuzz/recording_fuzzer once UBSan was made fatal).
template <typename T>
bool fits(const json& j) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!j.is_number_float()) return true;
    const double v = j.get<double>();
    return std::isfinite(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
           v <= static_cast<double>(std::numeric_limits<T>::max());
  } else if constexpr (IsVector<T>::value) {
    if (!j.is_array()) return true;
    return std::all_of(j.begin(), j.end(), [](const json& e) { return fits<typename T::value_type>(e); });
  } else {
    return true;
  }
}

// Where the names of fields present but unreadable go (null: nowhere), with the prefix
// that places them ("gpus[].", "processes[].").
struct Unreadable {
  std::vector<std::string>* names = nullptr;
  const char* prefix = "";
  void add(const char* key) const {
    if (names == nullptr) return;
    std::string n = std::string(prefix) + key;
    if (std::find(names->begin(), names->end(), n) == names->end()) names->push_back(std::move(n));
  }
};

// True when `key` holds a value of type T (then in *out). A key of the wrong type keeps
// the default and is named in `bad`: bad input is counted, never fatal.
template <typename T>
bool get_if(const json& j, const char* key, T* out, const Unreadable& bad = {}) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return false;
  if (fits<T>(*it)) {
    try {
      *out = it->get<T>();
      return true;
    } catch (const json::exception&) {
    }
  }
  bad.add(key);
  return false;
}

template <typename T>
void get_opt(const json& j, const char* key, std::optional<T>* out, const Unreadable& bad = {}) {
  T v{};
  if (get_if(j, key, &v, bad)) *out = std::move(v);
}

template <typename T>
void put_opt(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

json gpu_to_json(const GpuMeta& g) {
  json j = {{"index", g.index},   {"name", g.name}, {"uuid", g.uuid},
            {"bus_id", g.bus_id}, {"pids", g.pids}, {"used", g.used}};
  put_opt(j, "sm_count", g.sm_count);
  put_opt(j, "max_link_gen", g.max_link_gen);
  put_opt(j, "max_link_width", g.max_link_width);
  put_opt(j, "numa_node", g.numa_node);
  if (!g.local_cpus.empty()) j["local_cpus"] = g.local_cpus;
  return j;
}

GpuMeta gpu_from_json(const json& j, const Unreadable& bad) {
  GpuMeta g;
  get_if(j, "index", &g.index, bad);
  get_if(j, "name", &g.name, bad);
  get_if(j, "uuid", &g.uuid, bad);
  get_if(j, "bus_id", &g.bus_id, bad);
  get_if(j, "pids", &g.pids, bad);
  get_if(j, "used", &g.used, bad);
  get_opt(j, "sm_count", &g.sm_count, bad);
  get_opt(j, "max_link_gen", &g.max_link_gen, bad);
  get_opt(j, "max_link_width", &g.max_link_width, bad);
  get_opt(j, "numa_node", &g.numa_node, bad);
  get_if(j, "local_cpus", &g.local_cpus, bad);
  return g;
}

}  // namespace

json process_to_json(const ProcessMeta& p) {
  json j = {{"pid", p.pid},
            {"ppid", p.ppid},
            {"comm", p.comm},
            {"cmdline", p.cmdline},
            {"role", std::string(role_name(p.role))},
            {"first_seen_ns", p.first_seen_ns},
            {"last_seen_ns", p.last_seen_ns},
            {"exited", p.exited}};
  put_opt(j, "rank", p.rank);
  put_opt(j, "cpus_allowed", p.cpus_allowed);
  if (!p.thread_names.empty()) {
    json names = json::object();
    for (const auto& [tid, name] : p.thread_names) names[std::to_string(tid)] = name;
    j["thread_names"] = std::move(names);
  }
  return j;
}

bool process_from_json(const json& j, ProcessMeta* out, std::vector<std::string>* unreadable) {
  const Unreadable bad{unreadable, "processes[]."};
  if (!j.is_object() || !j.contains("pid")) return false;
  ProcessMeta p;
  get_if(j, "pid", &p.pid, bad);
  get_if(j, "ppid", &p.ppid, bad);
  get_if(j, "comm", &p.comm, bad);
  get_if(j, "cmdline", &p.cmdline, bad);
  std::string role;
  get_if(j, "role", &role, bad);
  p.role = parse_role(role).value_or(ProcessRole::kChild);
  get_opt(j, "rank", &p.rank, bad);
  get_opt(j, "cpus_allowed", &p.cpus_allowed, bad);
  if (const auto it = j.find("thread_names"); it != j.end() && it->is_object()) {
    for (const auto& [key, name] : it->items()) {
      int64_t tid = 0;
      const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), tid);
      if (ec == std::errc() && ptr == key.data() + key.size() && name.is_string())
        p.thread_names[tid] = name.get<std::string>();
    }
  }
  get_if(j, "first_seen_ns", &p.first_seen_ns, bad);
  get_if(j, "last_seen_ns", &p.last_seen_ns, bad);
  get_if(j, "exited", &p.exited, bad);
  *out = std::move(p);
  return true;
}

json run_meta_to_json(const RunMeta& meta) {
  json j = {{"format", "chokepoint.recording"},
            {"format_version", meta.format_version},
            {"chokepoint_version", meta.chokepoint_version},
            {"command", meta.command},
            {"pid", meta.pid},
            {"start_ns", meta.start_ns},
            {"interval_ns", meta.interval_ns},
            {"host", meta.host},
            {"gpu_note", meta.gpu_note}};
  if (meta.recorder_pid > 0) j["recorder_pid"] = meta.recorder_pid;
  if (!meta.gpu_unavailable.empty()) j["gpu_unavailable"] = meta.gpu_unavailable;
  if (!meta.sampler_cpu_ms.empty()) j["sampler_cpu_ms"] = meta.sampler_cpu_ms;
  put_opt(j, "end_ns", meta.end_ns);
  put_opt(j, "exit_code", meta.exit_code);
  if (!meta.stacks.tool.empty() || !meta.stacks.note.empty()) {
    const StacksMeta& s = meta.stacks;
    j["stacks"] = {{"tool", s.tool},
                   {"file", s.file},
                   {"sources_file", s.sources_file},
                   {"origin_ns", s.origin_ns},
                   {"pid", s.pid},
                   {"rate_hz", s.rate_hz},
                   {"note", s.note}};
    if (!s.bursts.empty()) {
      json b = json::array();
      for (const StackBurst& x : s.bursts)
        b.push_back({{"file", x.file}, {"origin_ns", x.origin_ns}, {"rate_hz", x.rate_hz}});
      j["stacks"]["bursts"] = std::move(b);
    }
  }
  j["gpus"] = json::array();
  for (const GpuMeta& g : meta.gpus) j["gpus"].push_back(gpu_to_json(g));
  j["processes"] = json::array();
  for (const ProcessMeta& p : meta.processes) j["processes"].push_back(process_to_json(p));
  return j;
}

bool run_meta_from_json(const json& j, RunMeta* out, std::vector<std::string>* unreadable) {
  const Unreadable bad{unreadable, ""};
  const Unreadable bad_stacks{unreadable, "stacks."};
  if (!j.is_object() || !j.contains("format_version")) return false;
  RunMeta m;
  get_if(j, "format_version", &m.format_version, bad);
  get_if(j, "chokepoint_version", &m.chokepoint_version, bad);
  get_if(j, "command", &m.command, bad);
  get_if(j, "pid", &m.pid, bad);
  get_if(j, "recorder_pid", &m.recorder_pid, bad);
  get_if(j, "start_ns", &m.start_ns, bad);
  get_opt(j, "end_ns", &m.end_ns, bad);
  get_if(j, "interval_ns", &m.interval_ns, bad);
  get_opt(j, "exit_code", &m.exit_code, bad);
  get_if(j, "host", &m.host, bad);
  get_if(j, "gpu_note", &m.gpu_note, bad);
  get_if(j, "gpu_unavailable", &m.gpu_unavailable, bad);
  get_if(j, "sampler_cpu_ms", &m.sampler_cpu_ms, bad);
  if (const auto it = j.find("stacks"); it != j.end() && it->is_object()) {
    get_if(*it, "tool", &m.stacks.tool, bad_stacks);
    get_if(*it, "file", &m.stacks.file, bad_stacks);
    get_if(*it, "sources_file", &m.stacks.sources_file, bad_stacks);
    get_if(*it, "origin_ns", &m.stacks.origin_ns, bad_stacks);
    get_if(*it, "pid", &m.stacks.pid, bad_stacks);
    get_if(*it, "rate_hz", &m.stacks.rate_hz, bad_stacks);
    get_if(*it, "note", &m.stacks.note, bad_stacks);
    if (const auto b = it->find("bursts"); b != it->end() && b->is_array()) {
      const Unreadable bad_burst{unreadable, "stacks.bursts[]."};
      for (const json& x : *b) {
        if (!x.is_object()) continue;
        StackBurst sb;
        get_if(x, "file", &sb.file, bad_burst);
        get_if(x, "origin_ns", &sb.origin_ns, bad_burst);
        get_if(x, "rate_hz", &sb.rate_hz, bad_burst);
        if (!sb.file.empty()) m.stacks.bursts.push_back(std::move(sb));
      }
    }
  }
  if (const auto it = j.find("gpus"); it != j.end() && it->is_array()) {
    for (const json& g : *it) {
      if (g.is_object()) m.gpus.push_back(gpu_from_json(g, Unreadable{unreadable, "gpus[]."}));
    }
  }
  if (const auto it = j.find("processes"); it != j.end() && it->is_array()) {
    for (const json& p : *it) {
      ProcessMeta pm;
      if (process_from_json(p, &pm, unreadable)) m.processes.push_back(std::move(pm));
    }
  }
  *out = std::move(m);
  return true;
}

}  // namespace chokepoint::samples
