#include "doctor/gpu_facts.h"

#include "base/text.h"

namespace chokepoint::doctor {
namespace {

class Collector {
 public:
  Collector(const nvml::Nvml& n, NvmlFacts* facts) : nvml_(n), facts_(facts) {}

  // Records the text of the code of every invalid reading, so checks can quote it.
  template <typename T>
  nvml::Value<T> note(nvml::Value<T> v) {
    if (!v.valid && !facts_->error_text.count(v.error)) facts_->error_text[v.error] = nvml_.error_string(v.error);
    return v;
  }

 private:
  const nvml::Nvml& nvml_;
  NvmlFacts* facts_;
};

GpuFacts collect_gpu(const nvml::Device& d, Collector& c, const machine::HostInputs& host) {
  using nvml::Clock;
  GpuFacts g;
  g.index = d.index();
  g.name = c.note(d.name());
  g.uuid = c.note(d.uuid());
  g.pci = c.note(d.pci_info());
  g.memory = c.note(d.memory_info());
  g.link_gen = c.note(d.pcie_link_generation());
  g.link_gen_max = c.note(d.max_pcie_link_generation());
  g.link_gen_gpu_max = c.note(d.gpu_max_pcie_link_generation());
  g.link_width = c.note(d.pcie_link_width());
  g.link_width_max = c.note(d.max_pcie_link_width());
  g.sm_clock = c.note(d.clock_mhz(Clock::kSm));
  g.sm_clock_max = c.note(d.max_clock_mhz(Clock::kSm));
  g.mem_clock = c.note(d.clock_mhz(Clock::kMem));
  g.mem_clock_max = c.note(d.max_clock_mhz(Clock::kMem));
  g.clock_reasons = c.note(d.clocks_event_reasons());
  g.pstate = c.note(d.performance_state());
  g.power_mw = c.note(d.power_usage_mw());
  g.power_limit_mw = c.note(d.enforced_power_limit_mw());
  g.power_default_limit_mw = c.note(d.default_power_limit_mw());
  g.temperature_c = c.note(d.temperature_c());
  g.utilization = c.note(d.utilization());
  g.persistence = c.note(d.persistence_mode());
  g.ecc_mode = c.note(d.ecc_mode());
  g.ecc_volatile_uncorrected = c.note(d.total_ecc_errors(nvml::EccError::kUncorrected, nvml::EccCounter::kVolatile));
  g.ecc_aggregate_uncorrected = c.note(d.total_ecc_errors(nvml::EccError::kUncorrected, nvml::EccCounter::kAggregate));
  g.retired_sbe = c.note(d.retired_pages(nvml::RetirementCause::kMultipleSingleBit));
  g.retired_dbe = c.note(d.retired_pages(nvml::RetirementCause::kDoubleBit));
  g.retired_pending = c.note(d.retired_pages_pending());
  g.remapped = c.note(d.remapped_rows());
  auto procs = c.note(d.compute_processes());
  if (procs.valid) {
    std::vector<GpuProcess> list;
    for (const auto& p : *procs) {
      GpuProcess gp{p.pid, p.used_bytes, {}};
      if (auto comm = host.read("/proc/" + std::to_string(p.pid) + "/comm", 256)) gp.command = trim(*comm);
      list.push_back(std::move(gp));
    }
    g.processes = nvml::Value<std::vector<GpuProcess>>::ok(std::move(list));
  } else {
    g.processes = nvml::Value<std::vector<GpuProcess>>::fail(procs.error);
  }
  g.nvml_cpu_affinity = c.note(d.cpu_affinity());
  if (g.pci.valid) g.sysfs = read_pci_numa(host, g.pci->sysfs_bus_id());
  g.gpm_supported = c.note(d.gpm_supported());
  return g;
}

}  // namespace

std::string describe_error(const NvmlFacts& facts, int code) {
  std::string text;
  if (auto it = facts.error_text.find(code); it != facts.error_text.end()) text = it->second;
  if (code == nvml::kMissingSymbol) return "not provided by this driver's NVML";
  if (code == 3) return "not supported on this GPU" + (text.empty() ? "" : " (" + text + ")");
  if (code == 4) return "no permission" + (text.empty() ? "" : " (" + text + ")");
  return (text.empty() ? "NVML error" : text) + " (code " + std::to_string(code) + ")";
}

NvmlFacts collect_nvml_facts(const nvml::OpenOptions& options, const machine::HostInputs& host) {
  NvmlFacts facts;
  auto opened = nvml::Nvml::open(options);
  if (!opened.ok()) {
    facts.error = opened.status().message();
    return facts;
  }
  const nvml::Nvml& n = *opened.value();
  Collector c(n, &facts);
  facts.available = true;
  facts.library = n.library_loaded();
  facts.driver_version = c.note(n.driver_version());
  facts.nvml_version = c.note(n.nvml_version());
  facts.cuda_driver_version = c.note(n.cuda_driver_version());
  facts.device_count = c.note(n.device_count());
  for (unsigned i = 0; facts.device_count.valid && i < *facts.device_count; ++i) {
    auto d = c.note(n.device(i));
    if (!d.valid) {
      GpuFacts g;
      g.index = i;
      g.handle_error = d.error;
      facts.gpus.push_back(std::move(g));
      continue;
    }
    facts.gpus.push_back(collect_gpu(*d, c, host));
  }
  return facts;
}

}  // namespace chokepoint::doctor
