#!/usr/bin/env bash
# Checks that no file includes a layer above it and that the C++ is formatted (.clang-format),
# then makes one build (clang, AddressSanitizer + UndefinedBehaviorSanitizer, the fuzzers'
# coverage, -Werror) and runs from it every test: unit and golden tests (CTest), clang-tidy
# (.clang-tidy) and the importers' fuzzers for a bounded time. Prints the time it took.
# Environment: FUZZ_SECONDS (default 60), SKIP_FUZZ=1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --test
jobs=$(nproc)
log=$(mktemp)
# Each CTest run's scratch files (tests' copies of fixtures, recordings, reports) go to a
# folder of this run's, removed after it: CI machines can be short of disk.
scratch=$(mktemp -d)
trap 'rm -rf "$log" "$scratch"' EXIT
run_ctest() {
  mkdir -p "$scratch/tmp"
  TMPDIR="$scratch/tmp" TEST_TMPDIR="$scratch/tmp" ctest "$@"
  local rc=$?
  rm -rf "$scratch/tmp"
  return $rc
}

# Each section's header carries the clock time: a CI log shows where its minutes go.
section() { echo "== $* ($(date +%T))"; }

section "layers and format"
bash scripts/check_layers.sh
bash scripts/check_format.sh

# One build serves every check (issue 46: CI within 30 minutes on 2 cores): clang with
# AddressSanitizer and UndefinedBehaviorSanitizer for the tests, libFuzzer's coverage for
# the fuzzers (they link against the same libraries), -Werror. The test programs' own
# files are compiled at -O0 with precompiled headers, and so are the CLI's own files
# (cmake/test_programs.cmake); the code they test keeps -O1. ccache is used when present.
section "build (clang, -fsanitize=address,undefined, fuzzer coverage, -Werror)"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Precompiled headers are cacheable only with these (ccache's manual, "Precompiled headers").
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
fi
CC=clang CXX=clang++ cmake -S . -B build-ci -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCHOKEPOINT_WERROR=ON \
      -DCHOKEPOINT_SANITIZE=address,undefined -DCHOKEPOINT_FUZZ=ON -DCHOKEPOINT_TEST_OPT=-O0 -DCHOKEPOINT_GLUE_OPT=-O0 \
      -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined -O1" "${launcher[@]}" >/dev/null
cmake --build build-ci -j"$jobs"

section "test (CTest, under the sanitizers)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_ctest --test-dir build-ci --output-on-failure -j"$jobs" | tee -a "$log"

section "clang-tidy (.clang-tidy: cognitive complexity <= 35, bug-prone checks)"
JOBS=$jobs bash scripts/check_tidy.sh build-ci

if [[ "${SKIP_FUZZ:-0}" != 1 ]]; then
  section "fuzz the importers (Kineto, recordings, CUPTI traces, py-spy stacks, ncu CSV, nsys exports) for ${FUZZ_SECONDS:-60} s"
  FUZZ_BUILD_DIR=$PWD/build-ci bash fuzz/run.sh "${FUZZ_SECONDS:-60}"
fi

# One closing line over every CTest run above (each ended "N% tests passed, F tests
# failed out of T"; a failure already stopped this script through pipefail).
total=$(grep -oE 'tests failed out of [0-9]+' "$log" | awk '{s += $5} END {print s + 0}')
echo "tests: ${total} passed, 0 failed"
echo "== done ($(date +%T)): $((SECONDS / 60)) min $((SECONDS % 60)) s"
