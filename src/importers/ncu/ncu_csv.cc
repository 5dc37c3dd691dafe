#include "importers/ncu/ncu_csv.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "importers/input/byte_source.h"

namespace chokepoint::importers {
namespace {

using timeline::KernelMetrics;
using timeline::KernelMetricsFile;

constexpr size_t kMaxFields = 1 << 16;      // a `--set full` export has ~2,300 columns
constexpr size_t kMaxMessages = 64;         // ncu's ==ERROR==/==WARNING== lines kept
constexpr size_t kMaxFileBytes = 1u << 30;  // 1 GB of CSV: thousands of launches of --set full

// One CSV record starting at `pos` (a line that begins with '"'): fields unquoted, ""
// unescaped; a quoted field may run over lines. Advances `pos` past the record.
std::vector<std::string> parse_record(std::string_view t, size_t& pos) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  while (pos < t.size()) {
    const char c = t[pos++];
    if (quoted) {
      if (c != '"') {
        fields.back() += c;
      } else if (pos < t.size() && t[pos] == '"') {
        fields.back() += '"';
        ++pos;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      if (fields.size() >= kMaxFields) break;
      fields.emplace_back();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::string_view line_at(std::string_view t, size_t pos) {
  const size_t end = t.find('\n', pos);
  std::string_view line = t.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The columns read, by name; -1 where the file lacks them.
struct Columns {
  std::unordered_map<std::string, size_t> index;
  int find(const std::string& name) const {
    auto it = index.find(name);
    return it == index.end() ? -1 : static_cast<int>(it->second);
  }
};

struct RowReader {
  const Columns& cols;
  const std::vector<std::string>& units;  // empty without a units row
  const std::vector<std::string>& row;

  std::optional<double> num(const std::string& name) const {
    const int c = cols.find(name);
    double v = 0;
    if (c < 0 || !parse_ncu_number(row[c], &v)) return std::nullopt;
    if (static_cast<size_t>(c) < units.size()) to_base_unit(units[c], &v);
    return v;
  }
  std::string text(const std::string& name) const {
    const int c = cols.find(name);
    return c < 0 ? std::string() : row[c];
  }
};

// A number read as an integer of type T, or nothing where it is not finite or does not
// fit (a fuzzed "device__attribute_multiprocessor_count" of 2.8e9 is not an int32).
template <typename T>
std::optional<T> as_integer(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return std::nullopt;
  const double t = std::trunc(*v);
  // 2^(digits) is exact in a double; T's max is not for 64 bits, so compare below it.
  const double limit = std::ldexp(1.0, std::numeric_limits<T>::digits);
  if (t >= limit || t < -limit) return std::nullopt;
  return static_cast<T>(t);
}

// A whole field of decimal digits that fits an int32 ("9" of "9.0"), else nothing.
std::optional<int32_t> small_int(std::string_view s) {
  int32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<double> sum_opt(std::optional<double> a, std::optional<double> b) {
  if (!a && !b) return std::nullopt;
  return a.value_or(0) + b.value_or(0);
}

// 2 x fused multiply-adds + multiplies + adds of one precision ("f" or "d"): from the
// .sum counters, or (--set full) from .sum.per_cycle_elapsed times the elapsed cycles.
std::optional<double> simt_flops(const RowReader& r, const std::string& p) {
  const std::array<std::pair<std::string, double>, 3> ops = {{{"fma", 2.0}, {"mul", 1.0}, {"add", 1.0}}};
  std::optional<double> total;
  const auto cycles = r.num("smsp__cycles_elapsed.avg");
  for (const auto& [op, weight] : ops) {
    const std::string base = "sass_thread_inst_executed_op_" + p + op + "_pred_on.sum";
    auto n = r.num("sm__" + base);
    if (!n) n = r.num("smsp__" + base);
    if (!n && cycles) {
      const auto per = r.num("smsp__" + base + ".per_cycle_elapsed");
      if (per) n = *per * *cycles;
    }
    if (n) total = total.value_or(0) + weight * *n;
  }
  return total;
}

KernelMetrics read_row(const RowReader& r) {
  KernelMetrics k;
  k.name = r.text("Kernel Name");
  if (k.name.empty()) k.name = r.text("launch__kernel_name");
  if (const auto id = as_integer<int64_t>(r.num("ID"))) k.id = *id;
  k.device = r.text("device__attribute_display_name");
  if (const auto n = as_integer<int32_t>(r.num("device__attribute_multiprocessor_count"))) k.num_sms = *n;
  const std::string cc = r.text("CC");
  if (const size_t dot = cc.find('.'); dot != std::string::npos && dot > 0 && dot + 1 < cc.size()) {
    const auto major = small_int(std::string_view(cc).substr(0, dot));
    const auto minor = small_int(std::string_view(cc).substr(dot + 1));
    if (major && minor) {  // both, or the compute capability stays unknown (-1)
      k.cc_major = *major;
      k.cc_minor = *minor;
    }
  }
  k.duration_ns = r.num("gpu__time_duration.sum");
  k.dram_read_bytes = r.num("dram__bytes_read.sum");
  k.dram_write_bytes = r.num("dram__bytes_write.sum");
  k.l2_bytes = r.num("lts__t_bytes.sum");
  if (!k.l2_bytes) {
    if (const auto s = r.num("lts__t_sectors.sum")) k.l2_bytes = *s * 32;  // 32-byte sectors
  }
  k.sm_pct = r.num("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  k.memory_pct = r.num("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  k.occupancy_pct = r.num("sm__warps_active.avg.pct_of_peak_sustained_active");
  k.theoretical_occupancy_pct = r.num("sm__maximum_warps_per_active_cycle_pct");
  k.limit_shared_mem = r.num("launch__occupancy_limit_shared_mem");
  k.limit_registers = r.num("launch__occupancy_limit_registers");
  k.limit_blocks = r.num("launch__occupancy_limit_blocks");
  k.limit_warps = r.num("launch__occupancy_limit_warps");
  k.fp32_flops = simt_flops(r, "f");
  k.fp64_flops = simt_flops(r, "d");
  k.tensor_bf16_flops = r.num("sm__ops_path_tensor_src_bf16_dst_fp32.sum");
  k.tensor_fp16_flops = r.num("sm__ops_path_tensor_src_fp16.sum");
  k.tensor_tf32_flops = r.num("sm__ops_path_tensor_src_tf32_dst_fp32.sum");
  k.tensor_fp8_flops = r.num("sm__ops_path_tensor_src_fp8.sum");
  if (!k.tensor_fp8_flops) {
    k.tensor_fp8_flops = sum_opt(r.num("sm__ops_path_tensor_src_fp8_sparsity_off.sum"),
                                 r.num("sm__ops_path_tensor_src_fp8_sparsity_on.sum"));
  }
  k.tensor_fp64_flops = r.num("sm__ops_path_tensor_src_fp64.sum");
  k.tensor_int8_ops = r.num("sm__ops_path_tensor_src_int8.sum");
  k.sm_clock_hz = r.num("smsp__cycles_elapsed.avg.per_second");
  k.tensor_pipe_pct = r.num("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed");
  if (const auto g = as_integer<int64_t>(r.num("launch__grid_size"))) k.grid_size = *g;
  if (const auto b = as_integer<int64_t>(r.num("launch__block_size"))) k.block_size = *b;
  k.grid = r.text("Grid Size");
  k.block = r.text("Block Size");
  if (const auto regs = as_integer<int32_t>(r.num("launch__registers_per_thread"))) k.registers_per_thread = *regs;
  k.shared_mem_per_block = r.num("launch__shared_mem_per_block");
  if (!k.shared_mem_per_block) {
    k.shared_mem_per_block = sum_opt(r.num("launch__shared_mem_per_block_static"),
                                     r.num("launch__shared_mem_per_block_dynamic"));
  }
  return k;
}

bool is_units_row(const std::vector<std::string>& row) { return !row.empty() && row[0].empty(); }

// What ncu said that explains an export without launches: its first error, else its first note.
std::string ncu_said(const KernelMetricsFile& f) {
  for (const std::string& m : f.messages) {
    if (starts_with(m, "==ERROR==")) return "; ncu said: " + m;
  }
  return f.messages.empty() ? std::string() : "; ncu said: " + f.messages.front();
}

}  // namespace

bool parse_ncu_number(std::string_view text, double* value) {
  std::string s;
  s.reserve(text.size());
  for (char c : text) {
    if (c != ',' && c != ' ') s += c;
  }
  if (s.empty() || s.size() > 64) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

bool to_base_unit(std::string_view unit, double* value) {
  // "Kbyte/block", "register/thread": the part before '/' is what is scaled, unless the
  // unit is a rate (then the value stays in its unit).
  const size_t slash = unit.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view per = unit.substr(slash + 1);
    if (per != "block" && per != "thread" && per != "warp") return false;
    unit = unit.substr(0, slash);
  }
  if (unit.empty() || unit == "%") return true;
  static const std::array<std::pair<std::string_view, double>, 8> kTime = {{{"ns", 1},
                                                                            {"nsecond", 1},
                                                                            {"us", 1e3},
                                                                            {"usecond", 1e3},
                                                                            {"ms", 1e6},
                                                                            {"msecond", 1e6},
                                                                            {"s", 1e9},
                                                                            {"second", 1e9}}};
  for (const auto& [u, scale] : kTime) {
    if (unit == u) {
      *value *= scale;
      return true;
    }
  }
  // SI prefixes on counted units ("Kbyte", "Mbyte", "Ginst"); binary ones ("Kibyte").
  double scale = 1;
  if (unit.size() > 2 && unit[1] == 'i' && std::string_view("KMGT").find(unit[0]) != std::string_view::npos) {
    scale = std::pow(1024.0, 1 + static_cast<double>(std::string_view("KMGT").find(unit[0])));
    unit.remove_prefix(2);
  } else if (unit.size() > 1 && std::string_view("KMGT").find(unit[0]) != std::string_view::npos &&
             std::islower(static_cast<unsigned char>(unit[1])) != 0) {
    scale = std::pow(1000.0, 1 + static_cast<double>(std::string_view("KMGT").find(unit[0])));
    unit.remove_prefix(1);
  }
  for (std::string_view u :
       {"byte", "inst", "sector", "cycle", "warp", "thread", "block", "register", "request", "hz"}) {
    if (unit == u) {
      *value *= scale;
      return true;
    }
  }
  return false;
}

bool looks_like_ncu_csv(std::string_view head) {
  // The header may follow ncu's ==PROF== lines and the profiled program's own output.
  for (size_t pos = 0, lines = 0; pos < head.size() && lines < 1000; ++lines) {
    const std::string_view line = line_at(head, pos);
    if (starts_with(line, "\"ID\",\"Process ID\"")) return true;
    if (starts_with(line, "\"") || starts_with(line, "{") || starts_with(line, "[")) return false;
    pos += line.size() + 1;
  }
  return false;
}

Result<KernelMetricsFile> parse_ncu_csv(std::string_view t) {
  KernelMetricsFile out;
  std::vector<std::string> header, units;
  Columns cols;
  bool units_checked = false;
  for (size_t pos = 0; pos < t.size();) {
    if (t[pos] != '"') {
      const std::string_view line = line_at(t, pos);
      if ((starts_with(line, "==ERROR==") || starts_with(line, "==WARNING==")) && out.messages.size() < kMaxMessages) {
        out.messages.emplace_back(line.substr(0, 1000));
      }
      if (!line.empty()) ++out.skipped_lines;
      pos += line.size() + 1;
      continue;
    }
    std::vector<std::string> rec = parse_record(t, pos);
    if (header.empty()) {
      if (rec.size() < 2 || rec[0] != "ID") {
        ++out.skipped_lines;
        continue;
      }
      header = std::move(rec);
      for (size_t i = 0; i < header.size(); ++i) cols.index.emplace(header[i], i);
      if (cols.find("Metric Name") >= 0 && cols.find("Metric Value") >= 0) {
        return Status::Error(
            "an Nsight Compute CSV of the details page (--page details): export the raw page instead (ncu --import "
            "REPORT.ncu-rep --csv --page raw)");
      }
      continue;
    }
    if (!units_checked) {
      units_checked = true;
      if (is_units_row(rec)) {
        units = std::move(rec);
        continue;
      }
    }
    if (rec.size() != header.size() || rec[0] == "ID") {
      ++out.skipped_lines;  // cut short, or a second export's header
      continue;
    }
    out.kernels.push_back(read_row(RowReader{cols, units, rec}));
  }
  if (header.empty()) {
    std::string why =
        "no Nsight Compute CSV header (a record starting \"ID\",\"Process ID\"): not `ncu --csv --page raw` output";
    why += ncu_said(out);
    return Status::Error(ErrorCode::kInput, why);
  }
  if (out.kernels.empty()) {
    std::string why = "an Nsight Compute CSV without any profiled launch";
    why += ncu_said(out);
    return Status::Error(ErrorCode::kInput, why);
  }
  return out;
}

Result<KernelMetricsFile> read_ncu_csv(const std::string& path) {
  auto src = open_file(path);
  if (!src.ok()) return src.status();
  std::string text;
  std::array<char, 1 << 16> buf{};
  for (;;) {
    auto n = src.value()->read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (n.value() == 0) break;
    text.append(buf.data(), n.value());
    if (text.size() > kMaxFileBytes) return Status::Error(ErrorCode::kInput, path + ": larger than 1 GB, not read");
  }
  auto r = parse_ncu_csv(text);
  if (!r.ok()) return Status::Error(r.status().code(), path + ": " + r.status().message());
  return r;
}

}  // namespace chokepoint::importers
