#include "doctor/nvml_dump.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "base/cpu_list.h"
#include "sampler/nvml/clock_reasons.h"

namespace chokepoint::doctor {
namespace {

class Dumper {
 public:
  Dumper(const nvml::Nvml& n, std::ostream& out) : n_(n), out_(out) {}

  template <typename T, typename F>
  void value(const std::string& name, const nvml::Value<T>& v, F&& show) {
    out_ << "  " << name << ": ";
    if (v.valid) {
      out_ << show(*v);
    } else {
      out_ << "<invalid: " << n_.error_string(v.error) << " (" << v.error << ")>";
    }
    out_ << "\n";
  }
  template <typename T>
  void value(const std::string& name, const nvml::Value<T>& v) {
    value(name, v, [](const T& x) {
      if constexpr (std::is_same_v<T, std::string>) {
        return x;
      } else if constexpr (std::is_same_v<T, bool>) {
        return std::string(x ? "true" : "false");
      } else {
        return std::to_string(x);
      }
    });
  }

  // A plausibility check: prints PASS/FAIL, counts failures.
  void expect(bool ok, const std::string& what) {
    out_ << "  [" << (ok ? "PASS" : "FAIL") << "] " << what << "\n";
    if (!ok) ++failures_;
  }
  int failures() const { return failures_; }
  std::ostream& out() { return out_; }

 private:
  const nvml::Nvml& n_;
  std::ostream& out_;
  int failures_ = 0;
};

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void dump_device(const nvml::Nvml& n, const nvml::Device& d, Dumper& w) {
  using nvml::Clock;
  auto& out = w.out();
  out << "\n== device " << d.index() << "\n";
  w.value("name", d.name());
  w.value("uuid", d.uuid());
  const auto pci = d.pci_info();
  w.value("pci", pci, [](const nvml::PciInfo& p) {
    return p.bus_id + " (domain " + hex(p.domain) + " bus " + hex(p.bus) + " device " + hex(p.device) +
           ", id " + hex(p.pci_device_id) + ", sysfs " + p.sysfs_bus_id() + ")";
  });
  w.value("compute_capability", d.cuda_compute_capability(),
          [](const nvml::ComputeCapability& c) { return std::to_string(c.major) + "." + std::to_string(c.minor); });
  const auto mem = d.memory_info();
  const auto mem1 = d.memory_info_v1();
  auto show_mem = [](const nvml::MemoryInfo& m) {
    return "total " + std::to_string(m.total) + " free " + std::to_string(m.free) + " used " + std::to_string(m.used) +
           (m.reserved ? " reserved " + std::to_string(*m.reserved) : std::string(" (no reserved field)"));
  };
  w.value("memory", mem, show_mem);
  w.value("memory_v1", mem1, show_mem);
  w.value("pcie_gen_current", d.pcie_link_generation());
  w.value("pcie_gen_max", d.max_pcie_link_generation());
  w.value("pcie_gen_gpu_max", d.gpu_max_pcie_link_generation());
  w.value("pcie_width_current", d.pcie_link_width());
  w.value("pcie_width_max", d.max_pcie_link_width());
  w.value("pcie_tx_kbps", d.pcie_throughput_kbps(nvml::PcieDirection::kTx));
  w.value("pcie_rx_kbps", d.pcie_throughput_kbps(nvml::PcieDirection::kRx));
  w.value("pcie_replay_counter", d.pcie_replay_counter());
  const auto sm = d.clock_mhz(Clock::kSm), sm_max = d.max_clock_mhz(Clock::kSm);
  w.value("clock_graphics_mhz", d.clock_mhz(Clock::kGraphics));
  w.value("clock_sm_mhz", sm);
  w.value("clock_mem_mhz", d.clock_mhz(Clock::kMem));
  w.value("max_clock_graphics_mhz", d.max_clock_mhz(Clock::kGraphics));
  w.value("max_clock_sm_mhz", sm_max);
  w.value("max_clock_mem_mhz", d.max_clock_mhz(Clock::kMem));
  w.value("clocks_event_reasons", d.clocks_event_reasons(), [](uint64_t r) {
    std::string s = hex(r);
    for (const auto& name : nvml::clock_event_reason_names(r)) s += " " + name;
    return s;
  });
  w.value("performance_state", d.performance_state());
  const auto power = d.power_usage_mw(), limit = d.enforced_power_limit_mw();
  w.value("power_usage_mw", power);
  w.value("enforced_power_limit_mw", limit);
  w.value("default_power_limit_mw", d.default_power_limit_mw());
  const auto temp = d.temperature_c();
  w.value("temperature_c", temp);
  w.value("persistence_mode", d.persistence_mode());
  w.value("ecc_mode", d.ecc_mode(), [](const nvml::EccMode& e) {
    return std::string("current ") + (e.current ? "on" : "off") + ", pending " + (e.pending ? "on" : "off");
  });
  using nvml::EccCounter;
  using nvml::EccError;
  w.value("ecc_volatile_corrected", d.total_ecc_errors(EccError::kCorrected, EccCounter::kVolatile));
  w.value("ecc_volatile_uncorrected", d.total_ecc_errors(EccError::kUncorrected, EccCounter::kVolatile));
  w.value("ecc_aggregate_corrected", d.total_ecc_errors(EccError::kCorrected, EccCounter::kAggregate));
  w.value("ecc_aggregate_uncorrected", d.total_ecc_errors(EccError::kUncorrected, EccCounter::kAggregate));
  w.value("retired_pages_sbe", d.retired_pages(nvml::RetirementCause::kMultipleSingleBit));
  w.value("retired_pages_dbe", d.retired_pages(nvml::RetirementCause::kDoubleBit));
  w.value("retired_pages_pending", d.retired_pages_pending());
  w.value("remapped_rows", d.remapped_rows(), [](const nvml::RemappedRows& r) {
    return "correctable " + std::to_string(r.correctable) + " uncorrectable " + std::to_string(r.uncorrectable) +
           " pending " + std::to_string(r.pending) + " failure " + std::to_string(r.failure_occurred);
  });
  const auto procs = d.compute_processes();
  w.value("compute_processes", procs, [](const std::vector<nvml::ProcessInfo>& ps) {
    std::string s = std::to_string(ps.size()) + " process(es)";
    for (const auto& p : ps) s += "; pid " + std::to_string(p.pid) + " " + (p.used_bytes ? std::to_string(*p.used_bytes) + " B" : "n/a");
    return s;
  });
  w.value("utilization", d.utilization(), [](const nvml::Utilization& u) {
    return "gpu " + std::to_string(u.gpu_pct) + "% memory " + std::to_string(u.memory_pct) + "%";
  });
  const auto affinity = d.cpu_affinity();
  w.value("cpu_affinity", affinity, [](const std::vector<unsigned>& c) { return format_cpu_list(c); });
  w.value("numa_node_id", d.numa_node_id());
  const auto gpm = d.gpm_supported();
  w.value("gpm_supported", gpm);

  std::vector<nvml::GpmMetricValue> metrics;
  if (gpm.valid && *gpm) {
    nvml::GpmSample a, b;
    const int rc1 = d.gpm_sample(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // NVML wants >= 100 ms between samples
    const int rc2 = d.gpm_sample(b);
    out << "  gpm_sample_get: " << rc1 << ", " << rc2 << "\n";
    static constexpr unsigned kIds[] = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 20, 21, 60, 61};
    const auto got = n.gpm_metrics(a, b, kIds);
    if (!got.valid) {
      out << "  gpm_metrics: <invalid: " << n.error_string(got.error) << " (" << got.error << ")>\n";
      w.expect(false, "GPM metrics readable (nvmlGpmMetricsGet_t layout)");
    } else {
      metrics = *got;
      for (const auto& m : metrics) {
        w.value("gpm." + std::to_string(m.id) + (m.name.empty() ? "" : " " + m.name) + (m.unit.empty() ? "" : " [" + m.unit + "]"),
                m.value, [](double v) { return std::to_string(v); });
      }
    }
  }

  out << "  -- plausibility (layout) checks\n";
  if (pci.valid) {
    char expected[40];
    std::snprintf(expected, sizeof expected, "%08X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
    w.expect(pci->bus_id == expected, "pci bus_id text '" + pci->bus_id + "' matches its numeric fields '" + expected + "'");
    w.expect((pci->pci_device_id & 0xffffu) == 0x10de, "pci vendor id is NVIDIA (0x10de)");
  }
  if (mem.valid) {
    const double parts = static_cast<double>(mem->free) + static_cast<double>(mem->used) +
                         static_cast<double>(mem->reserved.value_or(0));
    w.expect(std::fabs(parts - static_cast<double>(mem->total)) <= 0.02 * static_cast<double>(mem->total),
             "memory free + used (+ reserved) within 2% of total");
    if (mem1.valid) {
      w.expect(mem1->total == mem->total, "memory total agrees between v1 and v2");
      const double drift = std::fabs(static_cast<double>(mem1->free) - static_cast<double>(mem->free));
      w.expect(drift <= 0.02 * static_cast<double>(mem->total), "memory free agrees between v1 and v2 (within 2%)");
    }
  }
  if (procs.valid) {
    bool ok = true;
    for (const auto& p : *procs) {
      ok = ok && p.pid > 0 && p.pid <= (1u << 22) && (!mem.valid || !p.used_bytes || *p.used_bytes <= mem->total);
    }
    w.expect(ok, "process pids in (0, 2^22] and memory <= total (nvmlProcessInfo_t layout)");
  }
  if (temp.valid) w.expect(*temp > 0 && *temp < 130, "temperature between 0 and 130 C");
  if (power.valid && limit.valid) w.expect(*power <= 2u * *limit && *limit < 5'000'000u, "power <= 2x limit, limit < 5 kW");
  if (sm.valid && sm_max.valid) w.expect(*sm <= *sm_max + *sm_max / 10, "SM clock <= max SM clock (+10%)");
  if (affinity.valid) w.expect(!affinity->empty(), "CPU affinity not empty");
  for (const auto& m : metrics) {
    if (m.value.valid && m.id < 20) {
      w.expect(*m.value >= -0.5 && *m.value <= 100.5, "gpm metric " + std::to_string(m.id) + " within 0-100%");
    }
  }
}

}  // namespace

int dump_nvml(const nvml::OpenOptions& options, std::ostream& out) {
  auto opened = nvml::Nvml::open(options);
  if (!opened.ok()) {
    out << "NVML unavailable: " << opened.status().message() << "\n";
    return 2;
  }
  const nvml::Nvml& n = *opened.value();
  Dumper w(n, out);
  out << "library requested: " << n.library_requested() << "\nlibrary loaded:    " << n.library_loaded() << "\n";
  out << "struct sizes: pci " << sizeof(nvml::abi::PciInfo) << ", memory_v2 " << sizeof(nvml::abi::MemoryV2)
      << " (version " << hex(nvml::abi::kMemoryV2Version) << "), process " << sizeof(nvml::abi::ProcessInfoV2)
      << ", temperature_v1 " << sizeof(nvml::abi::TemperatureV1) << ", gpm metric " << sizeof(nvml::abi::GpmMetric)
      << ", gpm request " << sizeof(nvml::abi::GpmMetricsGet) << "\n";
  out << "\n== symbols\n";
  for (const auto& s : n.symbols()) {
    out << "  " << s.slot << ": " << (s.resolved.empty() ? (s.required ? "MISSING (required)" : "missing") : s.resolved) << "\n";
  }
  out << "\n== system\n";
  w.value("driver_version", n.driver_version());
  w.value("nvml_version", n.nvml_version());
  w.value("cuda_driver_version", n.cuda_driver_version(),
          [](int v) { return std::to_string(v) + " (" + nvml::format_cuda_version(v) + ")"; });
  const auto count = n.device_count();
  w.value("device_count", count);
  for (unsigned i = 0; count.valid && i < *count; ++i) {
    const auto d = n.device(i);
    if (!d.valid) {
      out << "\n== device " << i << ": <invalid handle: " << n.error_string(d.error) << ">\n";
      continue;
    }
    dump_device(n, *d, w);
  }
  out << "\nplausibility checks failed: " << w.failures() << "\n";
  return w.failures() == 0 ? 0 : 1;
}

}  // namespace chokepoint::doctor
