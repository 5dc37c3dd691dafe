#!/usr/bin/env bash
# Builds the Kineto fuzzer (clang, libFuzzer, ASan + UBSan) and runs it for SECONDS.
#
#   fuzz/run.sh 300                 # five minutes
#
# Seeds: fuzz/corpus/kineto (small pieces of the recorded traces and the hazard files).
# New inputs go to $BUILD/corpus/kineto so the checked-in seeds stay small; crashes to
# $BUILD/artifacts/. Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (parallel
# fuzzing jobs, default 1).
set -euo pipefail

seconds="${1:?usage: fuzz/run.sh SECONDS}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${FUZZ_JOBS:-1}"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCHOKEPOINT_FUZZ=ON -DCHOKEPOINT_TESTS=OFF >/dev/null
cmake --build "$build" --target kineto_fuzzer -j2

work="$build/corpus/kineto"
mkdir -p "$work" "$build/artifacts"
# -len_control=0: try long inputs (many events, chunk and batch boundaries) from the start.
args=(-dict="$root/fuzz/kineto.dict" -max_total_time="$seconds" -max_len=65536 -len_control=0
      -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$build/artifacts/" -print_final_stats=1)
# -jobs sends each job's output to fuzz-N.log in the current directory.
if (( jobs > 1 )); then
  args+=(-jobs="$jobs" -workers="$jobs")
  cd "$build"
fi
# The first corpus directory receives new inputs; the seeds are read only.
"$build/fuzz/kineto_fuzzer" "$work" "$root/fuzz/corpus/kineto" "${args[@]}"
