// Import throughput on a big trace, off by default (it needs a file and takes seconds):
//
//   CHOKEPOINT_BIG_TRACE=/tmp/chokepoint-bench/big1g.json build/importers_tests
//       --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'
//
// (benchmarks/make_trace.py makes such a file; .json.gz works too.) Prints MB/s of
// uncompressed JSON for reading alone and for the whole import, events, model bytes and
// the process's peak RSS (the read pass's 8 MiB buffer included).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "importers/importer.h"
#include "importers/input/byte_source.h"

namespace chokepoint::importers {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(KinetoThroughput, DISABLED_BigTrace) {
  const char* path = std::getenv("CHOKEPOINT_BIG_TRACE");
  if (!path) GTEST_SKIP() << "set CHOKEPOINT_BIG_TRACE to a trace file";

  // Pass 1: only read (and inflate), to know the JSON size and the cost of the input.
  auto t0 = std::chrono::steady_clock::now();
  Result<std::unique_ptr<ByteSource>> in = open_file(path);
  ASSERT_TRUE(in.ok());
  std::vector<char> buf(8 << 20);
  uint64_t json_bytes = 0;
  for (Result<size_t> r = in.value()->read(buf.data(), buf.size()); r.ok() && r.value() > 0;
       r = in.value()->read(buf.data(), buf.size())) {
    json_bytes += r.value();
  }
  const double read_secs = seconds_since(t0);

  // Pass 2: the import as the CLI runs it (sniff, import, finalize).
  timeline::Timeline tl;
  timeline::ImportStats stats;
  t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(import_paths({path}, tl, stats).ok());
  const double secs = seconds_since(t0);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double mb = static_cast<double>(json_bytes) / 1e6;
  std::printf("%s: %.1f MB of JSON (file %.1f MB)\n", path, mb, static_cast<double>(in.value()->total()) / 1e6);
  std::printf("  read only: %.2f s = %.0f MB/s\n", read_secs, mb / read_secs);
  std::printf(
      "  import:    %.2f s = %.0f MB/s of JSON, %zu events, model %.0f MiB, "
      "peak RSS %.0f MiB\n",
      secs, mb / secs, tl.event_count(), static_cast<double>(tl.memory_bytes()) / 1048576.0,
      static_cast<double>(ru.ru_maxrss) / 1024.0);
  for (const auto& s : stats.all()) {
    std::printf("  stat %s = %lld\n", s.name.c_str(), static_cast<long long>(s.count));
  }
}

}  // namespace
}  // namespace chokepoint::importers
