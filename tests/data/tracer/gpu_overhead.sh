#!/usr/bin/env bash
# Step time of PyTorch workloads without chokepoint, under `run --trace`, and under
# torch.profiler: ROUNDS interleaved rounds so that a machine that turns noisy shows in
# every mode alike (docs/BENCHMARKS.md). Modes: plain, trace (the default: runtime and
# driver API launches), nodriver (CHOKEPOINT_TRACE_DRIVER=0), kernels (GPU activity only,
# CHOKEPOINT_TRACE_API=0), profiler (CPU + CUDA activities, no schedule).
# Usage: [WORKLOADS="..."] [MODES="..."] tests/data/tracer/gpu_overhead.sh BIN_DIR OUT [SECONDS] [ROUNDS]
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
    nodriver) CHOKEPOINT_TRACE_DRIVER=0 "$cp" run --trace --view none -q -o "$f.rec" \
              -- python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$f.txt" 2>&1 ;;
    kernels) CHOKEPOINT_TRACE_API=0 "$cp" run --trace --view none -q -o "$f.rec" \
              -- python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$f.txt" 2>&1 ;;
    profiler) python3 "$wl/live_run.py" "$w" --seconds "$secs" --profile "$f.kineto.json" >"$f.txt" 2>&1
              rm -f "$f.kineto.json" ;;
  esac
  echo "$w $m $r $(grep -h -o 'median [0-9.]* ms/step' "$f.txt")" | tee -a "$out/overhead.txt" >&2
}
workloads=${WORKLOADS:-launch_bound healthy_bf16}
modes=${MODES:-plain trace nodriver kernels profiler}
for r in $(seq 1 "$rounds"); do
  for w in $workloads; do
    for m in $modes; do run_mode "$w" "$m" "$r"; done
  done
done
for w in $workloads; do
  for m in $modes; do
    [ -d "$out/$w.$m.1.rec" ] || continue
    python3 "$here/count_trace.py" "$out/$w.$m.1.rec" | grep -v -E 'marker_name|^  [0-9]' >"$out/$w.$m.counts.json"
  done
done
# Median step time per workload and mode over the rounds.
python3 - "$out/overhead.txt" <<'PY' | tee "$out/medians.txt" >&2
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[3] == "median":
        t[(f[0], f[1])].append(float(f[4]))
for (w, m), v in sorted(t.items()):
    print(f"{w} {m} median-of-{len(v)} {statistics.median(v):.3f} ms/step  rounds {v}")
PY
