#include "doctor/nvml_dump.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "base/cpu_list.h"
#include "samples/clock_reasons.h"

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

// The readings of one device that the plausibility checks look at again.
struct Readings {
  nvml::Value<nvml::PciInfo> pci;
  nvml::Value<nvml::MemoryInfo> mem, mem1;
  nvml::Value<unsigned> sm, sm_max, power, limit;
  nvml::Value<int> temp;
  nvml::Value<std::vector<nvml::ProcessInfo>> procs;
  nvml::Value<std::vector<unsigned>> affinity;
  nvml::Value<bool> gpm;
  std::vector<nvml::GpmMetricValue> metrics;
};

// Name, PCI identity, compute capability and memory.
void dump_identity(const nvml::Device& d, Dumper& w, Readings& r) {
  w.value("name", d.name());
  w.value("uuid", d.uuid());
  r.pci = d.pci_info();
  w.value("pci", r.pci, [](const nvml::PciInfo& p) {
    return p.bus_id + " (domain " + hex(p.domain) + " bus " + hex(p.bus) + " device " + hex(p.device) + ", id " +
           hex(p.pci_device_id) + ", sysfs " + p.sysfs_bus_id() + ")";
  });
  w.value("compute_capability", d.cuda_compute_capability(),
          [](const nvml::ComputeCapability& c) { return std::to_string(c.major) + "." + std::to_string(c.minor); });
  r.mem = d.memory_info();
  r.mem1 = d.memory_info_v1();
  auto show_mem = [](const nvml::MemoryInfo& m) {
    return "total " + std::to_string(m.total) + " free " + std::to_string(m.free) + " used " + std::to_string(m.used) +
           (m.reserved ? " reserved " + std::to_string(*m.reserved) : std::string(" (no reserved field)"));
  };
  w.value("memory", r.mem, show_mem);
  w.value("memory_v1", r.mem1, show_mem);
}

// PCIe link and traffic, clocks and what holds them down.
void dump_pcie_and_clocks(const nvml::Device& d, Dumper& w, Readings& r) {
  using nvml::Clock;
  w.value("pcie_gen_current", d.pcie_link_generation());
  w.value("pcie_gen_max", d.max_pcie_link_generation());
  w.value("pcie_gen_gpu_max", d.gpu_max_pcie_link_generation());
  w.value("pcie_width_current", d.pcie_link_width());
  w.value("pcie_width_max", d.max_pcie_link_width());
  w.value("pcie_tx_kbps", d.pcie_throughput_kbps(nvml::PcieDirection::kTx));
  w.value("pcie_rx_kbps", d.pcie_throughput_kbps(nvml::PcieDirection::kRx));
  w.value("pcie_replay_counter", d.pcie_replay_counter());
  r.sm = d.clock_mhz(Clock::kSm);
  r.sm_max = d.max_clock_mhz(Clock::kSm);
  w.value("clock_graphics_mhz", d.clock_mhz(Clock::kGraphics));
  w.value("clock_sm_mhz", r.sm);
  w.value("clock_mem_mhz", d.clock_mhz(Clock::kMem));
  w.value("max_clock_graphics_mhz", d.max_clock_mhz(Clock::kGraphics));
  w.value("max_clock_sm_mhz", r.sm_max);
  w.value("max_clock_mem_mhz", d.max_clock_mhz(Clock::kMem));
  w.value("clocks_event_reasons", d.clocks_event_reasons(), [](uint64_t reasons) {
    std::string s = hex(reasons);
    for (const auto& name : samples::clock_event_reason_names(reasons)) s += " " + name;
    return s;
  });
}

// Power, temperature and the memory's health (ECC, retired pages, remapped rows).
void dump_power_and_health(const nvml::Device& d, Dumper& w, Readings& r) {
  w.value("performance_state", d.performance_state());
  r.power = d.power_usage_mw();
  r.limit = d.enforced_power_limit_mw();
  w.value("power_usage_mw", r.power);
  w.value("enforced_power_limit_mw", r.limit);
  w.value("default_power_limit_mw", d.default_power_limit_mw());
  r.temp = d.temperature_c();
  w.value("temperature_c", r.temp);
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
  w.value("remapped_rows", d.remapped_rows(), [](const nvml::RemappedRows& rr) {
    return "correctable " + std::to_string(rr.correctable) + " uncorrectable " + std::to_string(rr.uncorrectable) +
           " pending " + std::to_string(rr.pending) + " failure " + std::to_string(rr.failure_occurred);
  });
}

// Processes, utilization, CPU affinity, NUMA node and whether GPM is there.
void dump_usage(const nvml::Device& d, Dumper& w, Readings& r) {
  r.procs = d.compute_processes();
  w.value("compute_processes", r.procs, [](const std::vector<nvml::ProcessInfo>& ps) {
    std::string s = std::to_string(ps.size()) + " process(es)";
    for (const auto& p : ps)
      s += "; pid " + std::to_string(p.pid) + " " + (p.used_bytes ? std::to_string(*p.used_bytes) + " B" : "n/a");
    return s;
  });
  w.value("utilization", d.utilization(), [](const nvml::Utilization& u) {
    return "gpu " + std::to_string(u.gpu_pct) + "% memory " + std::to_string(u.memory_pct) + "%";
  });
  r.affinity = d.cpu_affinity();
  w.value("cpu_affinity", r.affinity, [](const std::vector<unsigned>& c) { return format_cpu_list(c); });
  w.value("numa_node_id", d.numa_node_id());
  r.gpm = d.gpm_supported();
  w.value("gpm_supported", r.gpm);
}

// Two GPM samples 200 ms apart and the metrics between them (none without GPM).
std::vector<nvml::GpmMetricValue> dump_gpm(const nvml::Nvml& n, const nvml::Device& d, Dumper& w) {
  auto& out = w.out();
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
    return {};
  }
  for (const auto& m : *got) {
    w.value("gpm." + std::to_string(m.id) + (m.name.empty() ? "" : " " + m.name) +
                (m.unit.empty() ? "" : " [" + m.unit + "]"),
            m.value, [](double v) { return std::to_string(v); });
  }
  return *got;
}

// The PCI identity's text against its numbers, and the memory figures against each other.
void check_pci_and_memory(const Readings& r, Dumper& w) {
  if (r.pci.valid) {
    char expected[40];
    std::snprintf(expected, sizeof expected, "%08X:%02X:%02X.0", r.pci->domain, r.pci->bus, r.pci->device);
    w.expect(r.pci->bus_id == expected,
             "pci bus_id text '" + r.pci->bus_id + "' matches its numeric fields '" + expected + "'");
    w.expect((r.pci->pci_device_id & 0xffffu) == 0x10de, "pci vendor id is NVIDIA (0x10de)");
  }
  if (!r.mem.valid) return;
  const auto& mem = r.mem;
  const double parts = static_cast<double>(mem->free) + static_cast<double>(mem->used) +
                       static_cast<double>(mem->reserved.value_or(0));
  w.expect(std::fabs(parts - static_cast<double>(mem->total)) <= 0.02 * static_cast<double>(mem->total),
           "memory free + used (+ reserved) within 2% of total");
  if (r.mem1.valid) {
    w.expect(r.mem1->total == mem->total, "memory total agrees between v1 and v2");
    const double drift = std::fabs(static_cast<double>(r.mem1->free) - static_cast<double>(mem->free));
    w.expect(drift <= 0.02 * static_cast<double>(mem->total), "memory free agrees between v1 and v2 (within 2%)");
  }
}

// Plausibility checks of the readings: a struct read with the wrong layout shows here.
void check_layout(const Readings& r, Dumper& w) {
  check_pci_and_memory(r, w);
  if (r.procs.valid) {
    bool ok = true;
    for (const auto& p : *r.procs) {
      ok = ok && p.pid > 0 && p.pid <= (1u << 22) && (!r.mem.valid || !p.used_bytes || *p.used_bytes <= r.mem->total);
    }
    w.expect(ok, "process pids in (0, 2^22] and memory <= total (nvmlProcessInfo_t layout)");
  }
  if (r.temp.valid) w.expect(*r.temp > 0 && *r.temp < 130, "temperature between 0 and 130 C");
  if (r.power.valid && r.limit.valid) {
    w.expect(*r.power <= 2u * *r.limit && *r.limit < 5'000'000u, "power <= 2x limit, limit < 5 kW");
  }
  if (r.sm.valid && r.sm_max.valid) w.expect(*r.sm <= *r.sm_max + *r.sm_max / 10, "SM clock <= max SM clock (+10%)");
  if (r.affinity.valid) w.expect(!r.affinity->empty(), "CPU affinity not empty");
  for (const auto& m : r.metrics) {
    if (m.value.valid && m.id < 20) {
      w.expect(*m.value >= -0.5 && *m.value <= 100.5, "gpm metric " + std::to_string(m.id) + " within 0-100%");
    }
  }
}

void dump_device(const nvml::Nvml& n, const nvml::Device& d, Dumper& w) {
  w.out() << "\n== device " << d.index() << "\n";
  Readings r;
  dump_identity(d, w, r);
  dump_pcie_and_clocks(d, w, r);
  dump_power_and_health(d, w, r);
  dump_usage(d, w, r);
  if (r.gpm.valid && *r.gpm) r.metrics = dump_gpm(n, d, w);
  w.out() << "  -- plausibility (layout) checks\n";
  check_layout(r, w);
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
    out << "  " << s.slot << ": " << (s.resolved.empty() ? (s.required ? "MISSING (required)" : "missing") : s.resolved)
        << "\n";
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
