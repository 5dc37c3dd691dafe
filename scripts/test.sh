#!/usr/bin/env bash
# Checks that no file includes a layer above it and that the C++ is formatted (.clang-format),
# then builds and runs every test: unit and golden tests (CTest), clang-tidy (.clang-tidy),
# the tests again under AddressSanitizer and UndefinedBehaviorSanitizer, and the importers'
# fuzzers for a bounded time. Builds use -Werror.
# Environment: FUZZ_SECONDS (default 60), SKIP_SANITIZE=1, SKIP_FUZZ=1.
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

section "build and test (RelWithDebInfo)"
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHOKEPOINT_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"
run_ctest --test-dir build-test --output-on-failure -j"$jobs" | tee -a "$log"

section "clang-tidy (.clang-tidy: cognitive complexity <= 35, bug-prone checks)"
JOBS=$jobs bash scripts/check_tidy.sh build-test

if [[ "${SKIP_SANITIZE:-0}" != 1 ]]; then
  section "build and test with -fsanitize=address,undefined"
  # The sanitizer build needs several GB more; where the disk is short (a CI run ran out
  # linking it), the objects of the build above go first (they are not used again).
  free_gb=$(df -Pk . | awk 'NR == 2 {print int($4 / 1048576)}')
  if (( free_gb < 12 )); then
    echo "   ${free_gb} GB free: removing build-test's objects first"
    cmake --build build-test --target clean >/dev/null
  fi
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCHOKEPOINT_SANITIZE=address,undefined -DCHOKEPOINT_WERROR=ON \
        -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined -O1" >/dev/null
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_ctest --test-dir build-asan --output-on-failure -j"$jobs" -E 'Throughput' | tee -a "$log"
fi

if [[ "${SKIP_FUZZ:-0}" != 1 ]]; then
  section "fuzz the importers (Kineto, recordings, CUPTI traces, py-spy stacks, ncu CSV) for ${FUZZ_SECONDS:-60} s"
  bash fuzz/run.sh "${FUZZ_SECONDS:-60}"
fi

# One closing line over every CTest run above (each ended "N% tests passed, F tests
# failed out of T"; a failure already stopped this script through pipefail).
total=$(grep -oE 'tests failed out of [0-9]+' "$log" | awk '{s += $5} END {print s + 0}')
echo "tests: ${total} passed, 0 failed"
echo "== done ($(date +%T))"
