#!/usr/bin/env bash
# Step time of PyTorch workloads without chokepoint, under `run --trace` (and with driver
# API records too), and under torch.profiler: ROUNDS interleaved rounds so that a machine
# that turns noisy shows in every mode alike (docs/BENCHMARKS.md).
# Usage: tests/data/tracer/gpu_overhead.sh BIN_DIR OUT [SECONDS] [ROUNDS]
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; secs=${3:-8}; rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd); wl="$here/../workloads"
cp="$bin/chokepoint"
mkdir -p "$out"
run_mode() {  # workload mode round
  local w=$1 m=$2 r=$3 f="$out/$1.$2.$3"
  case $m in
    plain) python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$f.txt" 2>&1 ;;
    trace) "$cp" run --trace --view none -q -o "$f.rec" -- python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$f.txt" 2>&1 ;;
    driver) CHOKEPOINT_TRACE_DRIVER=1 "$cp" run --trace --view none -q -o "$f.rec" \
              -- python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$f.txt" 2>&1 ;;
    profiler) python3 "$wl/live_run.py" "$w" --seconds "$secs" --profile "$f.kineto.json" >"$f.txt" 2>&1
              rm -f "$f.kineto.json" ;;
  esac
  echo "$w $m $r $(grep -h -o 'median [0-9.]* ms/step' "$f.txt")" | tee -a "$out/overhead.txt" >&2
}
for r in $(seq 1 "$rounds"); do
  for w in launch_bound healthy_bf16; do
    for m in plain trace driver profiler; do run_mode "$w" "$m" "$r"; done
  done
done
for w in launch_bound healthy_bf16; do
  python3 "$here/count_trace.py" "$out/$w.driver.1.rec" | grep -v -E 'marker_name|^  [0-9]' > "$out/$w.driver.counts.json"
  python3 "$here/count_trace.py" "$out/$w.trace.1.rec" | grep -v -E 'marker_name|^  [0-9]' > "$out/$w.trace.counts.json"
done
