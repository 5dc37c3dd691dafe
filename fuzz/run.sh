#!/usr/bin/env bash
# Builds the fuzzers (clang, libFuzzer, ASan + UBSan), one per importer, and runs them for
# SECONDS in all (shared equally), or only the TARGETs named:
#
#   fuzz/run.sh 300                 # five minutes: kineto, recording, cupti, pyspy, ncu and nsys
#   fuzz/run.sh 60 recording        # the recording reader alone
#
# Seeds: fuzz/corpus/<target> (small pieces of the recorded traces and recordings, and
# the hazard files). New inputs go to $BUILD/corpus/<target> so the checked-in seeds stay
# small; crashes to $BUILD/artifacts/. Environment: FUZZ_BUILD_DIR (default build-fuzz; a
# tree configured with -DCHOKEPOINT_FUZZ=ON is reused as it is),
# FUZZ_JOBS (parallel fuzzing jobs, default 1).
set -euo pipefail

seconds="${1:?usage: fuzz/run.sh SECONDS [TARGET...]}"
shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(kineto recording cupti pyspy ncu nsys)
per=$(( seconds / ${#targets[@]} ))
(( per < 1 )) && per=1
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${FUZZ_JOBS:-1}"
# Undefined behaviour stops the run like a crash (UBSan would report and go on).
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

# A build directory configured with CHOKEPOINT_FUZZ=ON already (scripts/test.sh builds the
# tests and the fuzzers in one tree) is used as it is; otherwise a fuzzers-only one is made.
if ! grep -qs '^CHOKEPOINT_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCHOKEPOINT_FUZZ=ON -DCHOKEPOINT_TESTS=OFF >/dev/null
fi
cmake --build "$build" --target "${targets[@]/%/_fuzzer}" -j2

for target in "${targets[@]}"; do
work="$build/corpus/$target"
mkdir -p "$work" "$build/artifacts"
# -len_control=0: try long inputs (many events, chunk and batch boundaries) from the start.
args=(-max_total_time="$per" -max_len=65536 -len_control=0
      -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$build/artifacts/" -print_final_stats=1)
[ -f "$root/fuzz/$target.dict" ] && args+=(-dict="$root/fuzz/$target.dict")
# -jobs sends each job's output to fuzz-N.log in the current directory.
if (( jobs > 1 )); then
  args+=(-jobs="$jobs" -workers="$jobs")
  cd "$build"
fi
echo "== fuzz $target for $per s"
# The first corpus directory receives new inputs; the seeds are read only.
"$build/fuzz/${target}_fuzzer" "$work" "$root/fuzz/corpus/$target" "${args[@]}"
done
