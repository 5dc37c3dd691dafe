#include "machine/profile.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "machine/profile_keys.h"

namespace chokepoint::machine {

namespace key = profile_key;

namespace {

using Json = nlohmann::ordered_json;

Json num(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// Readers that accept a missing or null key (the field keeps its default) and reject a
// value of the wrong type with the key's name, so a hand-edited profile fails clearly.
template <typename T>
bool get(const Json& j, const char* key, T* out, std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  try {
    *out = it->get<T>();
    return true;
  } catch (const Json::exception&) {
    *err = std::string("'") + key + "' has the wrong type";
    return false;
  }
}

bool get_opt(const Json& j, const char* key, std::optional<double>* out, std::string* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number()) {
    *err = std::string("'") + key + "' is not a number";
    return false;
  }
  *out = it->get<double>();
  return true;
}

ResultStatus status_from(const std::string& s) {
  if (s == "waived") return ResultStatus::kWaived;
  if (s == "failed") return ResultStatus::kFailed;
  return ResultStatus::kOk;
}

bool read_measurement(const Json& j, Measurement* m, std::string* err) {
  std::string status = "ok";
  bool ok = get(j, key::kKey, &m->key, err) && get(j, key::kDescription, &m->description, err) &&
            get(j, key::kUnit, &m->unit, err) && get(j, key::kStatus, &status, err) &&
            get_opt(j, key::kValue, &m->value, err) && get(j, key::kSamples, &m->samples, err) &&
            get(j, key::kNote, &m->note, err) && get(j, key::kSeconds, &m->seconds, err) &&
            get_opt(j, key::kClockMhz, &m->clock_mhz, err) && get_opt(j, "reference", &m->reference, err) &&
            get(j, "reference_source", &m->reference_source, err) &&
            get_opt(j, "pct_of_reference", &m->pct_of_reference, err) && get_opt(j, "par_pct", &m->par_pct, err) &&
            get(j, "verdict", &m->verdict, err) && get(j, "cause", &m->cause, err) &&
            get(j, "cause_rules", &m->cause_rules, err);
  m->status = status_from(status);
  // An ok result without a value cannot be used as a ceiling: treat it as failed.
  if (ok && m->status == ResultStatus::kOk && !m->value) {
    m->status = ResultStatus::kFailed;
    if (m->note.empty()) m->note = "no value recorded";
  }
  if (!ok) *err = "result '" + m->key + "': " + *err;
  return ok;
}

bool read_gpu(const Json& j, GpuProfile* g, std::string* err) {
  std::vector<int> cc;
  bool ok = get(j, key::kIndex, &g->index, err) && get(j, key::kName, &g->name, err) &&
            get(j, key::kUuid, &g->uuid, err) && get(j, key::kPciBusId, &g->pci_bus_id, err) &&
            get(j, key::kCc, &cc, err) && get(j, key::kSms, &g->num_sms, err) &&
            get(j, key::kMemoryBytes, &g->memory_bytes, err) &&
            get(j, key::kFreeMemoryBytes, &g->free_memory_bytes, err) && get(j, key::kL2Bytes, &g->l2_bytes, err) &&
            get(j, key::kSmClockMaxMhz, &g->sm_clock_max_mhz, err) &&
            get(j, key::kMemClockMaxMhz, &g->mem_clock_max_mhz, err) &&
            get(j, key::kMemBusWidthBits, &g->mem_bus_width_bits, err) && get(j, key::kEcc, &g->ecc, err) &&
            get(j, key::kAsyncEngines, &g->async_engines, err) &&
            get_opt(j, key::kSmClockUnderLoadMhz, &g->sm_clock_under_load_mhz, err) &&
            get(j, "numa_node", &g->numa_node, err) && get(j, "published_gpu", &g->published_gpu, err) &&
            get(j, key::kError, &g->error, err);
  if (!ok) return false;
  if (cc.size() == 2) {
    g->cc_major = cc[0];
    g->cc_minor = cc[1];
  }
  if (auto it = j.find(key::kPcie); it != j.end() && it->is_object()) {
    ok = get(*it, key::kSpeedUnderLoad, &g->pcie_speed_under_load, err) &&
         get(*it, key::kWidthUnderLoad, &g->pcie_width_under_load, err) &&
         get(*it, "speed_max", &g->pcie_speed_max, err) && get(*it, "width_max", &g->pcie_width_max, err);
    if (!ok) return false;
  }
  if (auto it = j.find(key::kResults); it != j.end() && it->is_array()) {
    for (const auto& r : *it) {
      if (!r.is_object()) continue;
      Measurement m;
      if (!read_measurement(r, &m, err)) return false;
      g->results.push_back(std::move(m));
    }
  }
  if (auto it = j.find("ridge_points"); it != j.end() && it->is_array()) {
    for (const auto& r : *it) {
      if (!r.is_object()) continue;
      RidgePoint rp;
      if (!get(r, "precision", &rp.precision, err) || !get(r, "tflops", &rp.tflops, err) ||
          !get(r, "hbm_gbps", &rp.hbm_gbps, err) || !get(r, "flop_per_byte", &rp.flop_per_byte, err) ||
          !get_opt(r, "published_flop_per_byte", &rp.published_flop_per_byte, err)) {
        return false;
      }
      g->ridge_points.push_back(std::move(rp));
    }
  }
  return true;
}

bool read_host(const Json& j, HostInfo* h, std::string* err) {
  return get(j, "hostname", &h->hostname, err) && get(j, "cpus", &h->cpus, err) &&
         get(j, "loadavg_1m", &h->loadavg_1m, err) && get(j, "virtual_machine", &h->virtual_machine, err) &&
         get(j, "cpu_governor", &h->cpu_governor, err) && get(j, "iommu", &h->iommu, err) &&
         get(j, "process_numa_nodes", &h->process_numa_nodes, err) && get(j, "env", &h->env, err);
}

Json to_json(const Measurement& m) {
  Json j;
  j[key::kKey] = m.key;
  j[key::kDescription] = m.description;
  j[key::kUnit] = m.unit;
  j[key::kStatus] = to_string(m.status);
  j[key::kValue] = num(m.value);
  j[key::kSamples] = m.samples;
  j[key::kNote] = m.note;
  j[key::kSeconds] = m.seconds;
  j[key::kClockMhz] = num(m.clock_mhz);
  j["reference"] = num(m.reference);
  j["reference_source"] = m.reference_source;
  j["pct_of_reference"] = num(m.pct_of_reference);
  j["par_pct"] = num(m.par_pct);
  j["verdict"] = m.verdict;
  j["cause"] = m.cause;
  j["cause_rules"] = m.cause_rules;
  return j;
}

Json to_json(const GpuProfile& g) {
  Json j;
  j[key::kIndex] = g.index;
  j[key::kName] = g.name;
  j[key::kUuid] = g.uuid;
  j[key::kPciBusId] = g.pci_bus_id;
  j[key::kCc] = Json::array({g.cc_major, g.cc_minor});
  j[key::kSms] = g.num_sms;
  j[key::kMemoryBytes] = g.memory_bytes;
  j[key::kFreeMemoryBytes] = g.free_memory_bytes;
  j[key::kL2Bytes] = g.l2_bytes;
  j[key::kSmClockMaxMhz] = g.sm_clock_max_mhz;
  j[key::kMemClockMaxMhz] = g.mem_clock_max_mhz;
  j[key::kMemBusWidthBits] = g.mem_bus_width_bits;
  j[key::kEcc] = g.ecc;
  j[key::kAsyncEngines] = g.async_engines;
  j[key::kSmClockUnderLoadMhz] = num(g.sm_clock_under_load_mhz);
  j[key::kPcie] = {{key::kSpeedUnderLoad, g.pcie_speed_under_load},
                   {key::kWidthUnderLoad, g.pcie_width_under_load},
                   {"speed_max", g.pcie_speed_max},
                   {"width_max", g.pcie_width_max}};
  j["numa_node"] = g.numa_node;
  j["published_gpu"] = g.published_gpu;
  j[key::kError] = g.error;
  Json results = Json::array();
  for (const auto& m : g.results) results.push_back(to_json(m));
  j[key::kResults] = std::move(results);
  Json ridges = Json::array();
  for (const auto& r : g.ridge_points) {
    ridges.push_back({{"precision", r.precision},
                      {"tflops", r.tflops},
                      {"hbm_gbps", r.hbm_gbps},
                      {"flop_per_byte", r.flop_per_byte},
                      {"published_flop_per_byte", num(r.published_flop_per_byte)}});
  }
  j["ridge_points"] = std::move(ridges);
  return j;
}

}  // namespace

const char* to_string(ResultStatus s) {
  switch (s) {
    case ResultStatus::kOk: return "ok";
    case ResultStatus::kWaived: return "waived";
    case ResultStatus::kFailed: return "failed";
  }
  return "failed";
}

const Measurement* GpuProfile::find(std::string_view key) const {
  for (const auto& m : results) {
    if (m.key == key) return &m;
  }
  return nullptr;
}

Measurement* GpuProfile::find(std::string_view key) {
  for (auto& m : results) {
    if (m.key == key) return &m;
  }
  return nullptr;
}

std::optional<double> GpuProfile::ok_value(std::string_view key) const {
  const Measurement* m = find(key);
  if (m == nullptr || m->status != ResultStatus::kOk) return std::nullopt;
  return m->value;
}

Result<Profile> parse_profile(std::string_view text) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Error("profile is not a JSON object");
  Profile p;
  std::string err;
  bool ok = get(j, key::kSchema, &p.schema, &err) && get(j, "tool_version", &p.tool_version, &err) &&
            get(j, "created_utc", &p.created_utc, &err) && get(j, key::kMode, &p.mode, &err) &&
            get(j, key::kCudaDriver, &p.cuda_driver, &err) && get(j, key::kCudaRuntime, &p.cuda_runtime, &err) &&
            get(j, key::kCublaslt, &p.cublaslt, &err) && get(j, key::kCublasltNote, &p.cublaslt_note, &err) &&
            get(j, key::kSeconds, &p.seconds, &err) && get(j, key::kError, &p.error, &err);
  if (!ok) return Status::Error("profile: " + err);
  // Same major version only: "chokepoint.profile/1" reads "chokepoint.profile/1.x".
  const std::string_view want = kProfileSchema;
  if (p.schema.compare(0, want.size(), want) != 0) {
    return Status::Error("profile schema '" + p.schema + "' is not " + std::string(want));
  }
  if (auto it = j.find("host"); it != j.end() && it->is_object()) {
    if (!read_host(*it, &p.host, &err)) return Status::Error("profile host: " + err);
  }
  if (auto it = j.find(key::kGpus); it != j.end() && it->is_array()) {
    for (const auto& g : *it) {
      if (!g.is_object()) continue;
      GpuProfile gp;
      if (!read_gpu(g, &gp, &err)) return Status::Error("profile gpu: " + err);
      p.gpus.push_back(std::move(gp));
    }
  }
  return p;
}

std::string profile_to_json(const Profile& p) {
  Json j;
  j[key::kSchema] = p.schema;
  j["tool_version"] = p.tool_version;
  j["created_utc"] = p.created_utc;
  j[key::kMode] = p.mode;
  j[key::kCudaDriver] = p.cuda_driver;
  j[key::kCudaRuntime] = p.cuda_runtime;
  j[key::kCublaslt] = p.cublaslt;
  j[key::kCublasltNote] = p.cublaslt_note;
  j[key::kSeconds] = p.seconds;
  j[key::kError] = p.error;
  j["host"] = {{"hostname", p.host.hostname},
               {"cpus", p.host.cpus},
               {"loadavg_1m", p.host.loadavg_1m},
               {"virtual_machine", p.host.virtual_machine},
               {"cpu_governor", p.host.cpu_governor},
               {"iommu", p.host.iommu},
               {"process_numa_nodes", p.host.process_numa_nodes},
               {"env", p.host.env}};
  Json gpus = Json::array();
  for (const auto& g : p.gpus) gpus.push_back(to_json(g));
  j[key::kGpus] = std::move(gpus);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

double foreign_gpu_memory_gib(const GpuProfile& g) {
  // A CUDA context with cuBLASLt loaded takes up to ~1 GiB of device memory on large GPUs
  // (module images, local memory reservation); more than this much missing at the start
  // means another process holds it.
  constexpr double kOwnContextGiB = 1.5;
  if (g.memory_bytes <= 0 || g.free_memory_bytes < 0) return 0;
  const double used = static_cast<double>(g.memory_bytes - g.free_memory_bytes) / (1u << 30);
  return used > kOwnContextGiB ? used : 0;
}

int pcie_gen_from_speed(std::string_view s) {
  // Transfer rate per lane by generation: 2.5, 5, 8, 16, 32, 64 GT/s.
  const double gts = std::atof(std::string(s).c_str());
  if (gts <= 0) return -1;
  constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64};
  for (int i = 0; i < 6; ++i) {
    if (gts < kRates[i] * 1.1) return i + 1;
  }
  return 6;
}

int pcie_width_from_text(std::string_view s) {
  std::string t(s);
  if (!t.empty() && (t[0] == 'x' || t[0] == 'X')) t.erase(0, 1);
  const int w = std::atoi(t.c_str());
  return w > 0 ? w : -1;
}

}  // namespace chokepoint::machine
