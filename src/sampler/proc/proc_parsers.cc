#include "sampler/proc/proc_parsers.h"

#include "base/cpu_list.h"

#include <charconv>
#include <cstdlib>

namespace chokepoint::sampler::proc {
namespace {

// Splits on runs of spaces and tabs.
class Fields {
 public:
  explicit Fields(std::string_view s) : s_(s) {}
  bool next(std::string_view* out) {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    if (pos_ >= s_.size()) return false;
    const size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ' ' && s_[pos_] != '\t') ++pos_;
    *out = s_.substr(b, pos_ - b);
    return true;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

template <typename T>
bool to_num(std::string_view s, T* out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Calls fn(line) for every line.
template <typename Fn>
void for_lines(std::string_view text, Fn fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    fn(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "Key:   123 kB" -> 123 (times 1024 when the unit is kB).
std::optional<uint64_t> key_value(std::string_view line, std::string_view key) {
  if (!starts_with(line, key) || line.size() <= key.size() || line[key.size()] != ':') return std::nullopt;
  Fields f(line.substr(key.size() + 1));
  std::string_view num, unit;
  uint64_t v = 0;
  if (!f.next(&num) || !to_num(num, &v)) return std::nullopt;
  if (f.next(&unit) && unit == "kB") v *= 1024;
  return v;
}

}  // namespace

std::optional<SystemStat> parse_stat(std::string_view text) {
  SystemStat s;
  bool have_cpu = false;
  for_lines(text, [&](std::string_view line) {
    Fields f(line);
    std::string_view key, v;
    if (!f.next(&key)) return;
    if (key == "cpu") {
      uint64_t* slots[] = {&s.cpu.user,   &s.cpu.nice, &s.cpu.system,  &s.cpu.idle,
                           &s.cpu.iowait, &s.cpu.irq,  &s.cpu.softirq, &s.cpu.steal};
      int n = 0;
      for (uint64_t* slot : slots) {
        if (!f.next(&v) || !to_num(v, slot)) break;
        ++n;
      }
      have_cpu = n >= 4;  // user nice system idle exist on every kernel
    } else if (starts_with(key, "cpu")) {
      ++s.cpu_count;
    } else if (key == "ctxt" && f.next(&v)) {
      to_num(v, &s.ctxt);
    } else if (key == "procs_running" && f.next(&v)) {
      to_num(v, &s.procs_running);
    } else if (key == "procs_blocked" && f.next(&v)) {
      to_num(v, &s.procs_blocked);
    }
  });
  if (!have_cpu) return std::nullopt;
  return s;
}

VmStat parse_vmstat(std::string_view text) {
  VmStat s;
  for_lines(text, [&](std::string_view line) {
    Fields f(line);
    std::string_view key, v;
    uint64_t n = 0;
    if (!f.next(&key) || !f.next(&v) || !to_num(v, &n)) return;
    if (key == "pswpin") s.pswpin = n;
    if (key == "pswpout") s.pswpout = n;
    if (key == "pgmajfault") s.pgmajfault = n;
  });
  return s;
}

std::optional<Pressure> parse_pressure(std::string_view text) {
  Pressure p;
  bool any = false;
  for_lines(text, [&](std::string_view line) {
    Fields f(line);
    std::string_view kind, field;
    if (!f.next(&kind)) return;
    while (f.next(&field)) {
      if (starts_with(field, "total=")) {
        uint64_t t = 0;
        const std::string_view num = field.substr(6);
        const auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), t);
        if (ec != std::errc()) continue;
        if (kind == "some") p.some_total_us = t;
        if (kind == "full") p.full_total_us = t;
        any = true;
        continue;
      }
      if (!starts_with(field, "avg10=")) continue;
      // from_chars for double is not in every libstdc++ this builds with: strtod on a copy.
      const std::string num(field.substr(6));
      char* end = nullptr;
      const double v = std::strtod(num.c_str(), &end);
      if (end == num.c_str()) continue;
      if (kind == "some") p.some_avg10 = v;
      if (kind == "full") p.full_avg10 = v;
      any = true;
    }
  });
  if (!any) return std::nullopt;
  return p;
}

bool is_whole_disk(std::string_view name) {
  for (std::string_view skip : {"loop", "ram", "zram", "dm-", "md", "sr", "fd"}) {
    if (starts_with(name, skip)) return false;
  }
  const bool ends_digit = !name.empty() && name.back() >= '0' && name.back() <= '9';
  // nvme0n1p2, mmcblk0p1: a 'p' before the trailing partition number.
  if (starts_with(name, "nvme") || starts_with(name, "mmcblk")) {
    const size_t p = name.rfind('p');
    return !(p != std::string_view::npos && p + 1 < name.size() && ends_digit &&
             name.substr(p + 1).find_first_not_of("0123456789") == std::string_view::npos && name[p - 1] >= '0' &&
             name[p - 1] <= '9');
  }
  // sda1, vdb2, xvda1, hda3: a trailing number is a partition.
  return !ends_digit;
}

DiskTotals parse_diskstats(std::string_view text) {
  DiskTotals t;
  for_lines(text, [&](std::string_view line) {
    // major minor name reads merged sectors_read ms writes merged sectors_written ...
    Fields f(line);
    std::string_view tok[10];
    for (auto& x : tok) {
      if (!f.next(&x)) return;
    }
    if (!is_whole_disk(tok[2])) return;
    uint64_t r = 0, w = 0;
    if (!to_num(tok[5], &r) || !to_num(tok[9], &w)) return;
    t.sectors_read += r;
    t.sectors_written += w;
    ++t.disks;
  });
  return t;
}

MemInfo parse_meminfo(std::string_view text) {
  MemInfo m;
  for_lines(text, [&](std::string_view line) {
    if (auto v = key_value(line, "MemTotal")) m.mem_total_bytes = v;
    if (auto v = key_value(line, "MemAvailable")) m.mem_available_bytes = v;
    if (auto v = key_value(line, "SwapTotal")) m.swap_total_bytes = v;
    if (auto v = key_value(line, "SwapFree")) m.swap_free_bytes = v;
  });
  return m;
}

std::optional<TaskStat> parse_task_stat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  TaskStat s;
  s.comm = std::string(text.substr(open + 1, close - open - 1));
  // Field k (1-based, as proc(5) numbers them) is tok[k - 3]: the state is field 3.
  Fields f(text.substr(close + 1));
  std::string_view tok[37];
  int n = 0;
  while (n < 37 && f.next(&tok[n])) ++n;
  if (n < 22 || tok[0].size() != 1) return std::nullopt;
  s.state = tok[0][0];
  if (!to_num(tok[1], &s.ppid) || !to_num(tok[11], &s.utime) || !to_num(tok[12], &s.stime) ||
      !to_num(tok[17], &s.num_threads) || !to_num(tok[19], &s.starttime) || !to_num(tok[21], &s.rss_pages)) {
    return std::nullopt;
  }
  if (n >= 37) to_num(tok[36], &s.processor);
  return s;
}

TaskStatus parse_task_status(std::string_view text) {
  TaskStatus s;
  for_lines(text, [&](std::string_view line) {
    if (auto v = key_value(line, "voluntary_ctxt_switches")) s.voluntary_ctxt_switches = v;
    if (auto v = key_value(line, "nonvoluntary_ctxt_switches")) s.nonvoluntary_ctxt_switches = v;
    if (auto v = key_value(line, "Threads")) s.threads = static_cast<int64_t>(*v);
    if (auto v = key_value(line, "VmRSS")) s.vm_rss_bytes = v;
    constexpr std::string_view kAllowed = "Cpus_allowed_list:";
    if (line.substr(0, kAllowed.size()) == kAllowed) {
      std::string_view rest = line.substr(kAllowed.size());
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
      s.cpus_allowed = parse_cpu_list(rest);
    }
  });
  return s;
}

std::optional<SchedStat> parse_schedstat(std::string_view text) {
  Fields f(text);
  std::string_view a, b, c;
  SchedStat s;
  if (!f.next(&a) || !f.next(&b) || !f.next(&c)) return std::nullopt;
  while (!c.empty() && (c.back() == '\n')) c.remove_suffix(1);
  if (!to_num(a, &s.on_cpu_ns) || !to_num(b, &s.runq_wait_ns) || !to_num(c, &s.slices)) return std::nullopt;
  return s;
}

IoStat parse_io(std::string_view text) {
  IoStat s;
  for_lines(text, [&](std::string_view line) {
    if (auto v = key_value(line, "read_bytes")) s.read_bytes = v;
    if (auto v = key_value(line, "write_bytes")) s.write_bytes = v;
  });
  return s;
}

std::vector<std::string> parse_cmdline(std::string_view text) {
  std::vector<std::string> argv;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\0', pos);
    if (end == std::string_view::npos) end = text.size();
    argv.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return argv;
}

std::optional<std::string> find_environ(std::string_view environ, std::string_view name) {
  for (const std::string& kv : parse_cmdline(environ)) {
    if (kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 && kv[name.size()] == '=') {
      return kv.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

}  // namespace chokepoint::sampler::proc
