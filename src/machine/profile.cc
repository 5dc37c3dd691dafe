#include "machine/profile.h"

#include <nlohmann/json.hpp>

namespace chokepoint::machine {
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
  bool ok = get(j, "key", &m->key, err) && get(j, "description", &m->description, err) &&
            get(j, "unit", &m->unit, err) && get(j, "status", &status, err) && get_opt(j, "value", &m->value, err) &&
            get(j, "samples", &m->samples, err) && get(j, "note", &m->note, err) &&
            get(j, "seconds", &m->seconds, err) && get_opt(j, "clock_mhz", &m->clock_mhz, err) &&
            get_opt(j, "reference", &m->reference, err) && get(j, "reference_source", &m->reference_source, err) &&
            get_opt(j, "pct_of_reference", &m->pct_of_reference, err) && get_opt(j, "par_pct", &m->par_pct, err) &&
            get(j, "verdict", &m->verdict, err) && get(j, "cause", &m->cause, err);
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
  bool ok = get(j, "index", &g->index, err) && get(j, "name", &g->name, err) && get(j, "uuid", &g->uuid, err) &&
            get(j, "pci_bus_id", &g->pci_bus_id, err) && get(j, "cc", &cc, err) && get(j, "sms", &g->num_sms, err) &&
            get(j, "memory_bytes", &g->memory_bytes, err) && get(j, "free_memory_bytes", &g->free_memory_bytes, err) &&
            get(j, "l2_bytes", &g->l2_bytes, err) && get(j, "sm_clock_max_mhz", &g->sm_clock_max_mhz, err) &&
            get(j, "mem_clock_max_mhz", &g->mem_clock_max_mhz, err) &&
            get(j, "mem_bus_width_bits", &g->mem_bus_width_bits, err) && get(j, "ecc", &g->ecc, err) &&
            get(j, "async_engines", &g->async_engines, err) &&
            get_opt(j, "sm_clock_under_load_mhz", &g->sm_clock_under_load_mhz, err) &&
            get(j, "numa_node", &g->numa_node, err) && get(j, "published_gpu", &g->published_gpu, err) &&
            get(j, "error", &g->error, err);
  if (!ok) return false;
  if (cc.size() == 2) {
    g->cc_major = cc[0];
    g->cc_minor = cc[1];
  }
  if (auto it = j.find("pcie"); it != j.end() && it->is_object()) {
    ok = get(*it, "speed_under_load", &g->pcie_speed_under_load, err) &&
         get(*it, "width_under_load", &g->pcie_width_under_load, err) &&
         get(*it, "speed_max", &g->pcie_speed_max, err) && get(*it, "width_max", &g->pcie_width_max, err);
    if (!ok) return false;
  }
  if (auto it = j.find("results"); it != j.end() && it->is_array()) {
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
  j["key"] = m.key;
  j["description"] = m.description;
  j["unit"] = m.unit;
  j["status"] = to_string(m.status);
  j["value"] = num(m.value);
  j["samples"] = m.samples;
  j["note"] = m.note;
  j["seconds"] = m.seconds;
  j["clock_mhz"] = num(m.clock_mhz);
  j["reference"] = num(m.reference);
  j["reference_source"] = m.reference_source;
  j["pct_of_reference"] = num(m.pct_of_reference);
  j["par_pct"] = num(m.par_pct);
  j["verdict"] = m.verdict;
  j["cause"] = m.cause;
  return j;
}

Json to_json(const GpuProfile& g) {
  Json j;
  j["index"] = g.index;
  j["name"] = g.name;
  j["uuid"] = g.uuid;
  j["pci_bus_id"] = g.pci_bus_id;
  j["cc"] = Json::array({g.cc_major, g.cc_minor});
  j["sms"] = g.num_sms;
  j["memory_bytes"] = g.memory_bytes;
  j["free_memory_bytes"] = g.free_memory_bytes;
  j["l2_bytes"] = g.l2_bytes;
  j["sm_clock_max_mhz"] = g.sm_clock_max_mhz;
  j["mem_clock_max_mhz"] = g.mem_clock_max_mhz;
  j["mem_bus_width_bits"] = g.mem_bus_width_bits;
  j["ecc"] = g.ecc;
  j["async_engines"] = g.async_engines;
  j["sm_clock_under_load_mhz"] = num(g.sm_clock_under_load_mhz);
  j["pcie"] = {{"speed_under_load", g.pcie_speed_under_load},
               {"width_under_load", g.pcie_width_under_load},
               {"speed_max", g.pcie_speed_max},
               {"width_max", g.pcie_width_max}};
  j["numa_node"] = g.numa_node;
  j["published_gpu"] = g.published_gpu;
  j["error"] = g.error;
  Json results = Json::array();
  for (const auto& m : g.results) results.push_back(to_json(m));
  j["results"] = std::move(results);
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
  bool ok = get(j, "schema", &p.schema, &err) && get(j, "tool_version", &p.tool_version, &err) &&
            get(j, "created_utc", &p.created_utc, &err) && get(j, "mode", &p.mode, &err) &&
            get(j, "cuda_driver", &p.cuda_driver, &err) && get(j, "cuda_runtime", &p.cuda_runtime, &err) &&
            get(j, "cublaslt", &p.cublaslt, &err) && get(j, "cublaslt_note", &p.cublaslt_note, &err) &&
            get(j, "seconds", &p.seconds, &err) && get(j, "error", &p.error, &err);
  if (!ok) return Status::Error("profile: " + err);
  // Same major version only: "chokepoint.profile/1" reads "chokepoint.profile/1.x".
  const std::string_view want = kProfileSchema;
  if (p.schema.compare(0, want.size(), want) != 0) {
    return Status::Error("profile schema '" + p.schema + "' is not " + std::string(want));
  }
  if (auto it = j.find("host"); it != j.end() && it->is_object()) {
    if (!read_host(*it, &p.host, &err)) return Status::Error("profile host: " + err);
  }
  if (auto it = j.find("gpus"); it != j.end() && it->is_array()) {
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
  j["schema"] = p.schema;
  j["tool_version"] = p.tool_version;
  j["created_utc"] = p.created_utc;
  j["mode"] = p.mode;
  j["cuda_driver"] = p.cuda_driver;
  j["cuda_runtime"] = p.cuda_runtime;
  j["cublaslt"] = p.cublaslt;
  j["cublaslt_note"] = p.cublaslt_note;
  j["seconds"] = p.seconds;
  j["error"] = p.error;
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
  j["gpus"] = std::move(gpus);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace chokepoint::machine
