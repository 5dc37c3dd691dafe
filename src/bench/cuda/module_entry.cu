// The module's C entry points (bench/module_api.h): parse the options, run the
// testcases of the mode on each selected GPU, return the raw profile as JSON. Nothing
// but C types and malloc'd text leaves; every exception is caught here.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cuda/check.h"
#include "bench/cuda/cublaslt_api.h"
#include "bench/cuda/resources.h"
#include "bench/cuda/testcase.h"
#include "bench/cuda/timing.h"
#include "bench/module_api.h"
#include "machine/profile_keys.h"

#define CP_EXPORT extern "C" __attribute__((visibility("default")))

namespace chokepoint::bench::gpu {

namespace key = machine::profile_key;
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr const char* kSchema = "chokepoint.profile/1";

struct Options {
  Mode mode = Mode::kFull;
  std::vector<int> devices;
  std::vector<std::string> only;
  bool list = false;
};

// Replaces invalid UTF-8 (a dlerror text, a device name) instead of throwing.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

const char* mode_name(Mode m) { return m == Mode::kQuick ? "quick" : m == Mode::kSelftest ? "selftest" : "full"; }

Options parse_options(const char* text) {
  Options o;
  if (text == nullptr || text[0] == '\0') return o;
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument("options are not a JSON object");
  const std::string mode = j.value(key::kMode, "full");
  if (mode == "quick") o.mode = Mode::kQuick;
  else if (mode == "selftest") o.mode = Mode::kSelftest;
  else if (mode != "full") throw std::invalid_argument("unknown mode '" + mode + "' (full, quick, selftest)");
  if (j.contains(key::kDevices)) o.devices = j[key::kDevices].get<std::vector<int>>();
  if (j.contains(key::kOnly)) o.only = j[key::kOnly].get<std::vector<std::string>>();
  o.list = j.value(key::kList, false);
  return o;
}

char* dup(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p != nullptr) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

std::string cuda_error_text(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

std::string no_gpu_message(cudaError_t e) {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  const std::string rt = std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
  switch (e) {
    case cudaErrorInsufficientDriver:
      return "no usable GPU: the NVIDIA driver (libcuda.so.1) is missing or older than CUDA " + rt +
             " that this module was built with (" + cuda_error_text(e) + ")";
    case cudaErrorNoDevice:
      return "no usable GPU: no CUDA device is visible (nvidia-smi; CUDA_VISIBLE_DEVICES) (" + cuda_error_text(e) + ")";
    default: return "no usable GPU: cudaGetDeviceCount failed (" + cuda_error_text(e) + ")";
  }
}

std::string uuid_text(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

int attr(cudaDeviceAttr a, int dev) {
  int v = -1;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : -1;
}

DeviceFacts gather_facts(int dev) {
  DeviceFacts f;
  f.index = dev;
  cudaDeviceProp prop{};
  CP_CUDA(cudaGetDeviceProperties(&prop, dev));
  f.name = prop.name;
  f.uuid = uuid_text(prop.uuid);
  f.cc_major = attr(cudaDevAttrComputeCapabilityMajor, dev);
  f.cc_minor = attr(cudaDevAttrComputeCapabilityMinor, dev);
  f.sms = attr(cudaDevAttrMultiProcessorCount, dev);
  f.l2_bytes = static_cast<size_t>(std::max(0, attr(cudaDevAttrL2CacheSize, dev)));
  f.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor, dev);
  const int clk = attr(cudaDevAttrClockRate, dev);         // kHz
  const int mclk = attr(cudaDevAttrMemoryClockRate, dev);  // kHz
  f.sm_clock_max_mhz = clk > 0 ? clk / 1000 : -1;
  f.mem_clock_max_mhz = mclk > 0 ? mclk / 1000 : -1;
  f.mem_bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth, dev);
  f.ecc = attr(cudaDevAttrEccEnabled, dev);
  f.async_engines = attr(cudaDevAttrAsyncEngineCount, dev);
  char bus[32];
  std::snprintf(bus, sizeof(bus), "%04x:%02x:%02x.0", std::max(0, attr(cudaDevAttrPciDomainId, dev)),
                std::max(0, attr(cudaDevAttrPciBusId, dev)), std::max(0, attr(cudaDevAttrPciDeviceId, dev)));
  f.pci_bus_id = bus;
  CP_CUDA(cudaSetDevice(dev));
  CP_CUDA(cudaFree(nullptr));  // create the context now, so free memory excludes nothing of ours but it
  CP_CUDA(cudaMemGetInfo(&f.free_memory, &f.total_memory));
  return f;
}

Json gpu_json(const DeviceFacts& f) {
  Json g;
  g[key::kIndex] = f.index;
  g[key::kName] = f.name;
  g[key::kUuid] = f.uuid;
  g[key::kPciBusId] = f.pci_bus_id;
  g[key::kCc] = Json::array({f.cc_major, f.cc_minor});
  g[key::kSms] = f.sms;
  g[key::kMemoryBytes] = f.total_memory;
  g[key::kFreeMemoryBytes] = f.free_memory;
  g[key::kL2Bytes] = f.l2_bytes;
  g[key::kSmClockMaxMhz] = f.sm_clock_max_mhz;
  g[key::kMemClockMaxMhz] = f.mem_clock_max_mhz;
  g[key::kMemBusWidthBits] = f.mem_bus_width_bits;
  g[key::kEcc] = f.ecc;
  g[key::kAsyncEngines] = f.async_engines;
  return g;
}

struct Progress {
  chokepoint_bench_progress_fn fn;
  void* ctx;
  int done = 0;
  int total = 0;
  void step(const std::string& label) {
    if (fn != nullptr) fn(ctx, done, total, label.c_str());
    ++done;
  }
};

// Runs one testcase; never throws. Sets *lost when the CUDA context is unusable after.
Json run_one(Testcase& t, Context& ctx, bool* lost, std::string* lost_why) {
  Json r;
  r[key::kKey] = t.key();
  r[key::kDescription] = t.description();
  r[key::kUnit] = t.unit();
  const auto t0 = Clock::now();
  std::string status = "ok", note;
  std::vector<double> samples;
  double clock_mhz = -1;
  try {
    const std::string reason = t.waive_reason(ctx);
    if (!reason.empty()) {
      status = "waived";
      note = reason;
    } else {
      Outcome o = t.run(ctx);
      samples = std::move(o.samples);
      note = std::move(o.note);
      clock_mhz = o.clock_mhz;
    }
  } catch (const Waived& w) {
    status = "waived";
    note = w.what();
  } catch (const std::exception& e) {
    status = "failed";
    note = e.what();
  } catch (...) {
    status = "failed";
    note = "unknown exception";
  }
  if (status == "ok") {
    bool valid = !samples.empty();
    for (double s : samples) valid = valid && std::isfinite(s);
    if (!valid) {
      status = "failed";
      note = "no valid measurement (" + note + ")";
    }
  }
  // A sticky error (illegal address, ...) poisons the context: every later call fails.
  (void)cudaGetLastError();
  if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    (void)cudaGetLastError();
    if (cudaDeviceSynchronize() != cudaSuccess) {
      *lost = true;
      *lost_why = "the CUDA context was lost after " + t.key() + " (" + cuda_error_text(e) + ")";
    }
    if (status == "ok") {
      status = "failed";
      note = cuda_error_text(e);
    }
  }
  r[key::kStatus] = status;
  r[key::kValue] = status == "ok" ? Json(median(samples)) : Json(nullptr);
  r[key::kSamples] = status == "ok" ? Json(samples) : Json::array();
  r[key::kNote] = note;
  r[key::kClockMhz] = status == "ok" && clock_mhz > 0 ? Json(clock_mhz) : Json(nullptr);
  r[key::kSeconds] = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

Json run_device(int dev, const Options& opt, TestcaseList& tests, Progress& progress) {
  Json g;
  Context ctx;
  try {
    ctx.dev = gather_facts(dev);
  } catch (const std::exception& e) {
    g[key::kIndex] = dev;
    g[key::kError] = std::string("cannot initialise the GPU: ") + e.what();
    progress.done += static_cast<int>(tests.size());
    return g;
  }
  g = gpu_json(ctx.dev);
  ctx.mode = opt.mode;
  ctx.runs = opt.mode == Mode::kFull ? 7 : opt.mode == Mode::kQuick ? 3 : 1;
  Json results = Json::array();
  bool lost = false;
  std::string lost_why;
  try {
    Stream stream;
    BlockingWait wait;
    ctx.stream = stream.get();
    ctx.wait = &wait;
    for (auto& t : tests) {
      progress.step("GPU " + std::to_string(dev) + " " + t->key() + ": " + t->description());
      if (lost) {
        results.push_back({{key::kKey, t->key()},
                           {key::kDescription, t->description()},
                           {key::kUnit, t->unit()},
                           {key::kStatus, "failed"},
                           {key::kValue, nullptr},
                           {key::kSamples, Json::array()},
                           {key::kNote, "not run: " + lost_why},
                           {key::kSeconds, 0}});
        continue;
      }
      results.push_back(run_one(*t, ctx, &lost, &lost_why));
    }
  } catch (const std::exception& e) {
    g[key::kError] = std::string("cannot set up the GPU for benchmarking: ") + e.what();
  }
  g[key::kSmClockUnderLoadMhz] = ctx.sm_clock_under_load_mhz > 0 ? Json(ctx.sm_clock_under_load_mhz) : Json(nullptr);
  g[key::kPcie] = {{key::kSpeedUnderLoad, ctx.pcie_speed_under_load},
                   {key::kWidthUnderLoad, ctx.pcie_width_under_load}};
  g[key::kResults] = std::move(results);
  if (lost) cudaDeviceReset();  // let the next GPU start clean
  return g;
}

std::string list_json() {
  Json list = Json::array();
  for (auto* make : {&make_benchmarks, &make_selftests}) {
    for (const auto& t : make()) {
      list.push_back({{key::kKey, t->key()},
                      {key::kDescription, t->description()},
                      {key::kUnit, t->unit()},
                      {key::kSelftest, t->selftest()}});
    }
  }
  return dump(Json{{key::kTestcases, list}});
}

int run(const char* options_json, chokepoint_bench_progress_fn progress_fn, void* progress_ctx, std::string* out) {
  const auto t0 = Clock::now();
  Json doc;
  doc[key::kSchema] = kSchema;
  Options opt;
  try {
    opt = parse_options(options_json);
  } catch (const std::exception& e) {
    doc[key::kError] = std::string("bad benchmark options: ") + e.what();
    *out = dump(doc);
    return 2;
  }
  if (opt.list) {
    *out = list_json();
    return 0;
  }
  TestcaseList tests = opt.mode == Mode::kSelftest ? make_selftests() : make_benchmarks();
  if (!opt.only.empty()) {
    TestcaseList kept;
    for (const auto& key : opt.only) {
      auto it = std::find_if(tests.begin(), tests.end(), [&](const auto& t) { return t && t->key() == key; });
      if (it == tests.end()) {
        doc[key::kError] = "unknown testcase '" + key + "' for mode " + mode_name(opt.mode) +
                           " (chokepoint bench --list)";
        *out = dump(doc);
        return 2;
      }
      kept.push_back(std::move(*it));
    }
    tests = std::move(kept);
  }
  doc[key::kMode] = mode_name(opt.mode);
  int driver = -1, runtime = -1;
  cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  cudaRuntimeGetVersion(&runtime);
  doc[key::kCudaDriver] = driver;
  doc[key::kCudaRuntime] = runtime;
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    doc[key::kError] = no_gpu_message(e == cudaSuccess ? cudaErrorNoDevice : e);
    *out = dump(doc);
    return 1;
  }
  std::string why;
  const LtApi* lt = cublaslt(&why);
  doc[key::kCublaslt] = lt != nullptr ? static_cast<long long>(lt->version) : -1LL;
  doc[key::kCublasltNote] = lt != nullptr ? lt->path : why;
  std::vector<int> devices = opt.devices;
  if (devices.empty()) {
    for (int d = 0; d < count; ++d) devices.push_back(d);
  }
  for (int d : devices) {
    if (d < 0 || d >= count) {
      doc[key::kError] = "GPU " + std::to_string(d) + " does not exist (" + std::to_string(count) + " visible)";
      *out = dump(doc);
      return 2;
    }
  }
  Progress progress{progress_fn, progress_ctx, 0, static_cast<int>(devices.size() * tests.size())};
  Json gpus = Json::array();
  bool any_ran = false;
  for (int d : devices) {
    Json g = run_device(d, opt, tests, progress);
    any_ran = any_ran || !g.contains(key::kError);
    gpus.push_back(std::move(g));
  }
  doc[key::kSeconds] = std::chrono::duration<double>(Clock::now() - t0).count();
  doc[key::kGpus] = std::move(gpus);
  *out = dump(doc);
  return any_ran ? 0 : 1;
}

}  // namespace

char* copy_for_caller(const std::string& s) { return dup(s); }

}  // namespace chokepoint::bench::gpu

CP_EXPORT int chokepoint_bench_abi_version(void) { return CHOKEPOINT_BENCH_ABI_VERSION; }

CP_EXPORT void chokepoint_bench_free(char* result_json) { std::free(result_json); }

CP_EXPORT int chokepoint_bench_run(const char* options_json, chokepoint_bench_progress_fn progress, void* progress_ctx,
                                   char** result_json) {
  std::string out;
  int rc = 1;
  try {
    rc = chokepoint::bench::gpu::run(options_json, progress, progress_ctx, &out);
  } catch (const std::exception& e) {
    nlohmann::json j{{chokepoint::machine::profile_key::kSchema, "chokepoint.profile/1"},
                     {chokepoint::machine::profile_key::kError, std::string("benchmark module: ") + e.what()}};
    out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    rc = 1;
  } catch (...) {
    out = R"({"schema":"chokepoint.profile/1","error":"benchmark module: unknown exception"})";
    rc = 1;
  }
  if (result_json != nullptr) *result_json = chokepoint::bench::gpu::copy_for_caller(out);
  return rc;
}
