// libFuzzer target for the recording reader (the importer of `run`/`watch` recordings,
// docs/RECORDING.md), followed by everything that reads a recording: the live analysis,
// every sample rule and the diagnosis.
//
// An input is a recording directory flattened: the bytes before the first NUL are
// meta.json (absent without a NUL), the rest samples.jsonl. Besides crashes, hangs and
// memory blowups, the fuzzer checks that the model it reads is consistent.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "analyses/sampled/live_analysis.h"
#include "rules/diagnose.h"
#include "samples/recording_reader.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "recording_fuzzer: %s\n", what);
    std::abort();
  }
}

const std::string& dir() {
  static const std::string d = [] {
    std::string p = std::filesystem::temp_directory_path().string() + "/recording_fuzzer_" + std::to_string(getpid());
    std::filesystem::create_directories(p);
    return p;
  }();
  return d;
}

void write(const std::string& name, std::string_view bytes, bool present) {
  const std::string path = dir() + "/" + name;
  if (!present) {
    std::filesystem::remove(path);
    return;
  }
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  write("meta.json", nul == std::string_view::npos ? std::string_view() : in.substr(0, nul),
        nul != std::string_view::npos);
  write("samples.jsonl", nul == std::string_view::npos ? in : in.substr(nul + 1), true);

  auto rec = chokepoint::samples::read_recording(dir());
  check(rec.ok(), "a directory with samples.jsonl must read");
  const chokepoint::samples::Recording& r = rec.value();
  for (const auto& s : r.samples.series()) {
    check(s.time_ns.size() == s.values.size() && s.values.size() == s.valid.size(), "ragged series columns");
  }
  const auto la = chokepoint::analyses::sampled::analyze_recording(r);
  check(la.ticks >= 0 && la.end_ns >= la.start_ns, "analysis window");
  const auto d = chokepoint::rules::diagnose_samples(r, la);
  for (const auto& f : d.findings) {
    check(!f.id.empty(), "finding without id");
    check(!f.estimated_speedup || *f.estimated_speedup >= 0.99, "speedup below 1");
  }
  check(d.confidence >= 0 && d.confidence <= 1, "confidence out of range");
  return 0;
}
