#!/usr/bin/env bash
# `chokepoint run --trace` on the GPU machine: exact counts on a CUDA program of known
# content, then the step time of PyTorch workloads without chokepoint, under `run`,
# under `run --trace` and under torch.profiler (the overhead targets of issue 4).
# Usage: tests/data/tracer/gpu_check.sh BIN_DIR OUT [SECONDS]
#   BIN_DIR holds chokepoint and libchokepoint_tracer.so (built elsewhere is fine).
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; secs=${3:-10}
here=$(cd "$(dirname "$0")" && pwd); wl="$here/../workloads"
cp="$bin/chokepoint"
mkdir -p "$out"

echo "== known counts" >&2
nvcc -O2 -o "$out/known_counts" "$here/known_counts.cu" || exit 1
"$cp" run --trace --view none -o "$out/known.rec" --report "$out/known.json" -f json \
  -- "$out/known_counts" 100 10 5 2>"$out/known.txt"
echo "exit $?" >&2
python3 "$here/count_trace.py" "$out/known.rec" | tee "$out/known_counts.json" >&2

for w in launch_bound healthy_bf16; do
  echo "== $w" >&2
  python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$out/$w.plain.txt" 2>&1
  "$cp" run --view none -q -o "$out/$w.run.rec" -- python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$out/$w.run.txt"
  "$cp" run --trace --view none -o "$out/$w.trace.rec" --report "$out/$w.trace.json" -f json \
    -- python3 "$wl/live_run.py" "$w" --seconds "$secs" >"$out/$w.trace.txt" 2>"$out/$w.trace.err"
  python3 "$wl/live_run.py" "$w" --seconds "$secs" --profile "$out/$w.kineto.json" >"$out/$w.profiler.txt" 2>&1
  for m in plain run trace profiler; do echo "  $m: $(grep -h 'ms/step' "$out/$w.$m.txt")" >&2; done
  python3 "$here/count_trace.py" "$out/$w.trace.rec" >"$out/$w.counts.json"
  grep -E '"(kernel|runtime_api|dropped|files|unended_files)"' "$out/$w.counts.json" >&2
done
