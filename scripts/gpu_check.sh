#!/usr/bin/env bash
# Checks chokepoint on a real GPU machine in one go; everything also lands in $OUT (the
# device runner's folder; else $OUT_DIR, else <build>/gpu_check-<what>) for sending back.
#
#   scripts/gpu_check.sh bench  [BUILD_DIR | --prebuilt DIR]
#       `chokepoint bench`: the self-test (is the method right?), a quick run and a full
#       run (are the numbers right, and within the 10 s / 60 s budgets?), each command's
#       exit status, wall time, stderr and report, plus the GPU's state from nvidia-smi.
#   scripts/gpu_check.sh doctor [BUILD_DIR | --prebuilt DIR]
#       the NVML loader and `chokepoint doctor`: doctor (text, then --json, timed), the
#       hidden `doctor --dump-nvml` (every NVML value read, raw, the symbol each slot bound
#       to, and plausibility checks that catch a wrong struct layout: bus id text vs
#       numeric fields, memory v1 vs v2, GPM ranges ...) beside nvidia-smi's view of the
#       same values, then, when PyTorch with CUDA is installed, doctor again while a bf16
#       GEMM loop runs (link at full speed, power cap, a process holding memory).
#   scripts/gpu_check.sh package BUILD DIR
#       on the build machine: fills DIR for --prebuilt with the binary, the bench module,
#       the tracer and their non-system libraries (the H200 machine has the CUDA toolkit but not the
#       project's C++ dependencies such as libfmt/libsimdjson).
#
# BUILD_DIR (default: a fresh temporary directory) is configured Release with tests off
# and only `chokepoint` is built (libchokepoint_bench.so with it where nvcc is found).
# CHOKEPOINT_BIN=F checks the binary F instead of building one. So, where the GPU
# machine cannot build the project:
#   cmake --build build-bench --target chokepoint && scripts/gpu_check.sh package build-bench build-carry
#   then on the GPU machine (build-carry travels with the tree): scripts/gpu_check.sh bench --prebuilt build-carry
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-}
shift || true
section() { printf '\n===== %s =====\n' "$*"; }

case "$what" in
  package)
    src=$1
    dest=$2
    mkdir -p "$dest"
    cp "$src/chokepoint" "$src/libchokepoint_bench.so" "$dest/" || exit 1
    # The tracer `run --trace` injects; found beside the binary.
    if [ -f "$src/libchokepoint_tracer.so" ]; then cp "$src/libchokepoint_tracer.so" "$dest/"; fi
    # Libraries every Linux GPU machine has are left out; the project's own deps travel.
    ldd "$src/chokepoint" | awk '$3 ~ /^\// {print $3}' |
      grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libz|libpthread|libdl|librt)\.so' |
      while read -r lib; do cp -L "$lib" "$dest/"; done
    ls -l "$dest"
    exit 0 ;;
  bench|doctor) ;;
  *) echo "usage: scripts/gpu_check.sh bench|doctor [BUILD_DIR | --prebuilt DIR] | package BUILD DIR" >&2
     exit 2 ;;
esac

# The binary: CHOKEPOINT_BIN, a --prebuilt directory, or a fresh build.
prebuilt=""
if [ "${1:-}" = "--prebuilt" ]; then
  prebuilt=$(cd "$2" && pwd)
  build=$prebuilt
else
  build=${1:-${BUILD_DIR:-$(mktemp -d /tmp/chokepoint-gpu-check.XXXXXX)}}
fi
out=${OUT:-${OUT_DIR:-$build/gpu_check-$what}}
mkdir -p "$out"

section "machine"
uname -srm
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,driver_version,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,clocks.sm,clocks.max.sm,power.limit,temperature.gpu,memory.used,memory.total --format=csv
command -v nvidia-smi >/dev/null && nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
command -v nvcc >/dev/null && nvcc --version | tail -1 || ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null

if [ -n "${CHOKEPOINT_BIN:-}" ]; then
  bin=$CHOKEPOINT_BIN
  echo "using $bin"
elif [ -n "$prebuilt" ]; then
  section "prebuilt ($prebuilt)"
  export LD_LIBRARY_PATH="$prebuilt${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  ldd "$prebuilt/chokepoint" | grep -E "not found|fmt|simdjson"
  bin=$prebuilt/chokepoint
else
  section "build ($build)"
  t0=$(date +%s)
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  if ! cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCHOKEPOINT_TESTS=OFF \
        >"$out/cmake_configure.log" 2>&1; then
    tail -40 "$out/cmake_configure.log"
    echo "gpu_check: configure failed: missing packages? (simdjson, fmt, nlohmann-json, CLI11, zlib)"
    exit 3
  fi
  grep -E "CUDA|chokepoint:" "$out/cmake_configure.log"
  if ! cmake --build "$build" -j"$(nproc 2>/dev/null || echo 4)" --target chokepoint >"$out/cmake_build.log" 2>&1; then
    grep -E "error|FAILED" -A3 "$out/cmake_build.log" | head -80
    echo "gpu_check: build failed"
    exit 3
  fi
  echo "built in $(( $(date +%s) - t0 )) s"
  bin=$build/chokepoint
fi
ls -l "$bin" "$(dirname "$bin")/libchokepoint_bench.so" 2>&1

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

check_bench() {
  run list "$bin" bench --list
  run selftest "$bin" bench --selftest --notes
  run quick "$bin" bench --quick --json
  run full "$bin" bench --json
  # The full run as a person reads it (re-rendered from its JSON: no second measurement).
  run full_text "$bin" bench --show "$out/full.out" --notes
  run quick_text "$bin" bench --show "$out/quick.out"
  # The no-GPU path on a GPU machine: CUDA_VISIBLE_DEVICES hides every device.
  CUDA_VISIBLE_DEVICES=-1 run no_gpu "$bin" bench --quick

  section "summary"
  for n in selftest quick full no_gpu; do printf '%-9s %s\n' "$n" "$(cat "$out/$n.status")"; done
  echo "outputs in $out"
}

check_doctor() {
  section "chokepoint doctor"
  local start end rc_text rc_json rc_dump rc_load=skipped
  start=$(date +%s.%N)
  "$bin" doctor --color never | tee "$out/doctor.txt"
  rc_text=${PIPESTATUS[0]}
  end=$(date +%s.%N)
  echo "exit $rc_text, wall $(echo "$end - $start" | bc 2>/dev/null || echo '?') s (budget: 2 s)"

  section "chokepoint doctor --json"
  "$bin" doctor --json > "$out/doctor.json"
  rc_json=$?
  cat "$out/doctor.json"
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('json ok:', d['summary'], 'elapsed_ms', round(d['elapsed_ms']))" "$out/doctor.json"; then :; else
    echo "JSON DID NOT PARSE"
  fi

  section "chokepoint doctor --dump-nvml (raw values and layout checks)"
  "$bin" doctor --dump-nvml | tee "$out/dump_nvml.txt"
  rc_dump=${PIPESTATUS[0]}

  section "nvidia-smi view of the same values"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,clocks_event_reasons.active,pstate,power.draw,power.limit,power.default_limit,temperature.gpu,persistence_mode,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,memory.total,memory.reserved,memory.used,memory.free,utilization.gpu \
      --format=csv 2>&1 | tee "$out/nvidia_smi.csv"
    nvidia-smi -q -d PCIE,PERFORMANCE,ROW_REMAPPER,PAGE_RETIREMENT > "$out/nvidia_smi_q.txt" 2>&1
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv 2>&1 | tee -a "$out/nvidia_smi.csv"
  else
    echo "nvidia-smi not found"
  fi

  section "doctor under load (bf16 GEMM loop in the background)"
  if python3 -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    python3 - <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 10
while time.time() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
PY
    local load_pid=$!
    sleep 5  # CUDA start-up, then a few seconds of steady load
    "$bin" doctor --json > "$out/doctor_loaded.json"
    rc_load=$?
    "$bin" doctor --color never > "$out/doctor_loaded.txt"
    cat "$out/doctor_loaded.txt"
    "$bin" doctor --dump-nvml > "$out/dump_nvml_loaded.txt"
    grep -E "pcie_gen_current|clocks_event_reasons|clock_sm_mhz|power_usage|compute_processes|utilization|gpm\." "$out/dump_nvml_loaded.txt"
    wait "$load_pid"
  else
    echo "PyTorch with CUDA not available: skipped"
  fi

  section "summary"
  echo "doctor text exit:   $rc_text (0 ok, 1 a check failed)"
  echo "doctor json exit:   $rc_json"
  echo "dump-nvml exit:     $rc_dump (0 = every layout check passed, 1 = a check failed, 2 = no NVML)"
  echo "doctor under load:  $rc_load"
  echo "outputs in $out"
  [ "$rc_dump" = 0 ]
}

"check_$what"
