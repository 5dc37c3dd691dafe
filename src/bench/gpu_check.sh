#!/usr/bin/env bash
# Checks `chokepoint bench` on a GPU machine in one go: builds in a fresh directory,
# then runs the self-test (is the method right?), a quick run and a full run (are the
# numbers right, and within the 10 s / 60 s budgets?), printing each command's exit
# status, wall time, stderr and report, plus the GPU's state from nvidia-smi.
# Everything also lands in $OUT_DIR (default <build>/gpu_check) for sending back.
#
# Usage: src/bench/gpu_check.sh [build-dir]        (from anywhere in the repository)
#        src/bench/gpu_check.sh --prebuilt DIR     (DIR holds chokepoint and
#            libchokepoint_bench.so built elsewhere, plus any shared libraries they need
#            that the GPU machine lacks, e.g. libfmt/libsimdjson: the H200 machine has
#            the CUDA toolkit but not the project's C++ dependencies)
#        src/bench/gpu_check.sh --package BUILD DIR (on the build machine: fills DIR for
#            --prebuilt with the binary, the module and their non-system libraries)
# So, where the GPU machine cannot build the project:
#   cmake --build build-bench --target chokepoint && src/bench/gpu_check.sh --package build-bench build-carry
#   then on the GPU machine (build-carry travels with the tree): src/bench/gpu_check.sh --prebuilt build-carry
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
prebuilt=""
if [ "${1:-}" = "--package" ]; then
  src=$2
  dest=$3
  mkdir -p "$dest"
  cp "$src/chokepoint" "$src/libchokepoint_bench.so" "$dest/" || exit 1
  # Libraries every Linux GPU machine has are left out; the project's own deps travel.
  ldd "$src/chokepoint" | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libz|libpthread|libdl|librt)\.so' |
    while read -r lib; do cp -L "$lib" "$dest/"; done
  ls -l "$dest"
  exit 0
fi
if [ "${1:-}" = "--prebuilt" ]; then
  prebuilt=$(cd "$2" && pwd)
  build=$prebuilt
else
  build=${1:-$root/build-gpu-check}
fi
out=${OUT_DIR:-$build/gpu_check}
jobs=$(nproc 2>/dev/null || echo 4)

section() { printf '\n===== %s =====\n' "$*"; }

section "machine"
uname -srm
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,driver_version,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,memory.used,memory.total --format=csv
command -v nvidia-smi >/dev/null && nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
command -v nvcc >/dev/null && nvcc --version | tail -1 || ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null

if [ -n "$prebuilt" ]; then
  section "prebuilt ($prebuilt)"
  export LD_LIBRARY_PATH="$prebuilt${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  ldd "$prebuilt/chokepoint" | grep -E "not found|fmt|simdjson"
else
section "build ($build)"
rm -rf "$build"
t0=$(date +%s)
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHOKEPOINT_TESTS=OFF >"$build.cmake.log" 2>&1; then
  tail -40 "$build.cmake.log"
  echo "gpu_check: configure failed"
  exit 1
fi
grep -E "CUDA|chokepoint:" "$build.cmake.log"
if ! cmake --build "$build" -j"$jobs" --target chokepoint >"$build.build.log" 2>&1; then
  grep -E "error|FAILED" -A3 "$build.build.log" | head -80
  echo "gpu_check: build failed"
  exit 1
fi
echo "built in $(( $(date +%s) - t0 )) s"
fi
ls -l "$build/chokepoint" "$build/libchokepoint_bench.so"
mkdir -p "$out"
cp=$build/chokepoint

# run NAME CMD...: exit status and wall time, then stderr and stdout, also kept in $out.
run() {
  local name=$1
  shift
  section "$name: $*"
  local start end rc
  start=$(date +%s%N)
  timeout 300 "$@" >"$out/$name.out" 2>"$out/$name.err"
  rc=$?
  end=$(date +%s%N)
  local ms=$(( (end - start) / 1000000 ))
  printf 'exit %d, wall %d.%03d s\n' "$rc" $((ms / 1000)) $((ms % 1000)) | tee "$out/$name.status"
  echo "--- stderr (last 40 lines)"
  tail -40 "$out/$name.err"
  echo "--- stdout"
  cat "$out/$name.out"
}

run list "$cp" bench --list
run selftest "$cp" bench --selftest --notes
run quick "$cp" bench --quick --json
run full "$cp" bench --json
# The full run as a person reads it (re-rendered from its JSON: no second measurement).
run full_text "$cp" bench --show "$out/full.out" --notes
run quick_text "$cp" bench --show "$out/quick.out"
# The no-GPU path on a GPU machine: CUDA_VISIBLE_DEVICES hides every device.
CUDA_VISIBLE_DEVICES=-1 run no_gpu "$cp" bench --quick

section "summary"
for n in selftest quick full no_gpu; do printf '%-9s %s\n' "$n" "$(cat "$out/$n.status")"; done
echo "outputs in $out"
