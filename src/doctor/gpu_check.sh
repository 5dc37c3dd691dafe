#!/usr/bin/env bash
# Validates the NVML loader and `chokepoint doctor` on a real GPU machine, in one run:
#   1. builds chokepoint in a fresh directory (tests off: only the binary is needed),
#   2. runs `chokepoint doctor` (text) and `chokepoint doctor --json`, timing both,
#   3. runs the hidden `chokepoint doctor --dump-nvml`: every NVML value we read, raw,
#      the symbol each slot bound to, and plausibility checks that catch a wrong struct
#      layout (bus id text vs numeric fields, memory v1 vs v2, GPM ranges ...),
#   4. prints nvidia-smi's view of the same values for a side-by-side comparison,
#   5. when PyTorch with CUDA is installed, repeats doctor --json while a bf16 GEMM
#      loop runs, so the busy paths (link at full speed, power cap, a process holding
#      memory) are exercised too.
# Usage (from the repository root): bash src/doctor/gpu_check.sh
#   BUILD_DIR=DIR      build there instead of a fresh mktemp directory
#   CHOKEPOINT_BIN=F   skip the build and check this binary
# Outputs go to $OUT (the device runner's folder) or to the build directory's out/.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$(mktemp -d /tmp/chokepoint-gpu-check.XXXXXX)}
out=${OUT:-$build/out}
mkdir -p "$out"
log() { printf '\n=== %s\n' "$*"; }

if [ -n "${CHOKEPOINT_BIN:-}" ]; then  # reuse a binary built elsewhere
  bin=$CHOKEPOINT_BIN
  echo "using $bin"
else
log "build ($build)"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if ! cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCHOKEPOINT_TESTS=OFF \
      > "$out/cmake_configure.log" 2>&1; then
  tail -30 "$out/cmake_configure.log"
  echo "configure failed: missing packages? (simdjson, fmt, nlohmann-json, CLI11, zlib)"
  exit 3
fi
if ! cmake --build "$build" -j"$(nproc)" --target chokepoint > "$out/cmake_build.log" 2>&1; then
  grep -E "error|Error" "$out/cmake_build.log" | head -30
  exit 3
fi
bin=$build/chokepoint
echo "built $bin"
fi

log "chokepoint doctor"
start=$(date +%s.%N)
"$bin" doctor --color never | tee "$out/doctor.txt"
rc_text=${PIPESTATUS[0]}
end=$(date +%s.%N)
echo "exit $rc_text, wall $(echo "$end - $start" | bc 2>/dev/null || echo '?') s (budget: 2 s)"

log "chokepoint doctor --json"
"$bin" doctor --json > "$out/doctor.json"
rc_json=$?
cat "$out/doctor.json"
if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('json ok:', d['summary'], 'elapsed_ms', round(d['elapsed_ms']))" "$out/doctor.json"; then :; else
  echo "JSON DID NOT PARSE"
fi

log "chokepoint doctor --dump-nvml (raw values and layout checks)"
"$bin" doctor --dump-nvml | tee "$out/dump_nvml.txt"
rc_dump=${PIPESTATUS[0]}

log "nvidia-smi view of the same values"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,clocks_event_reasons.active,pstate,power.draw,power.limit,power.default_limit,temperature.gpu,persistence_mode,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,memory.total,memory.reserved,memory.used,memory.free,utilization.gpu \
    --format=csv 2>&1 | tee "$out/nvidia_smi.csv"
  nvidia-smi -q -d PCIE,PERFORMANCE,ROW_REMAPPER,PAGE_RETIREMENT > "$out/nvidia_smi_q.txt" 2>&1
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv 2>&1 | tee -a "$out/nvidia_smi.csv"
else
  echo "nvidia-smi not found"
fi

log "doctor under load (bf16 GEMM loop in the background)"
rc_load=skipped
if python3 -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  python3 - <<'EOF' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 10
while time.time() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
EOF
  load_pid=$!
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

log "summary"
echo "doctor text exit:   $rc_text (0 ok, 1 a check failed)"
echo "doctor json exit:   $rc_json"
echo "dump-nvml exit:     $rc_dump (0 = every layout check passed, 1 = a check failed, 2 = no NVML)"
echo "doctor under load:  $rc_load"
echo "outputs in $out"
[ "$rc_dump" = 0 ]
