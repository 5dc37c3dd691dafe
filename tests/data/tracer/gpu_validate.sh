#!/usr/bin/env bash
# `chokepoint run --trace` on the GPU machine, correctness (issue 4; gpu_check.sh times it):
#  1. a CUDA program of known content with NVTX ranges: exact counts, NVTX steps, Linux tids
#  2. coexistence with torch.profiler in the same process
#  3. two processes that initialize CUDA: one trace file each
#  4. PyTorch workloads with an NVTX range per step, traced: the NVTX steps are the truth
#     the steps inferred from the same trace (annotations removed) are tested against.
# Usage: tests/data/tracer/gpu_validate.sh BIN_DIR OUT
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2
here=$(cd "$(dirname "$0")" && pwd); wl="$here/../workloads"
cp="$bin/chokepoint"
mkdir -p "$out"

echo "== 1. known counts with 4 NVTX ranges" >&2
nvcc -O2 -o "$out/known_counts" "$here/known_counts.cu" || exit 1
"$cp" run --trace --view none -o "$out/known.rec" --report "$out/known.json" -f json \
  -- "$out/known_counts" 100 10 5 4 2>"$out/known.txt"
echo "exit $?" >&2
python3 "$here/count_trace.py" "$out/known.rec" | tee "$out/known_counts.json" >&2
grep -E '"(steps|step_source)"' "$out/known.json" >&2

echo "== 2. torch.profiler in the traced process" >&2
"$cp" run --trace --view none -o "$out/coexist.rec" --report "$out/coexist.txt" \
  -- python3 "$wl/live_run.py" healthy_bf16 --seconds 3 --profile "$out/coexist.kineto.json" \
  >"$out/coexist.out" 2>"$out/coexist.err"
echo "exit $?" >&2
grep -i -E "tracer|cupti|profiler|warn" "$out/coexist.err" | head -5 >&2
python3 "$here/count_trace.py" "$out/coexist.rec" | grep -E '"(kernel|files|status_1|unended_files)"' >&2
python3 - "$out/coexist.kineto.json" <<'PY' >&2
import json, sys
d = json.load(open(sys.argv[1]))
print("torch.profiler kernels:", sum(1 for e in d["traceEvents"] if e.get("cat") == "kernel"))
PY
head -30 "$out/coexist.txt" >&2

echo "== 3. two processes" >&2
"$cp" run --trace --view none -q -o "$out/two.rec" -- python3 "$here/two_procs.py" >"$out/two.out" 2>&1
echo "exit $?" >&2
cat "$out/two.out" >&2
ls "$out/two.rec" >&2
python3 "$here/count_trace.py" "$out/two.rec" | grep -E -A3 '"(kernel|files|pids)"' >&2

echo "== 4. workloads with NVTX steps" >&2
mkdir -p "$out/steps"
for spec in healthy_bf16:2 input_bound:3 fp32_gemm:3 launch_bound:0.4 pageable_copy:3 sync_bound:2 allocator_churn:2 small_grid:0.5; do
  w=${spec%%:*}; s=${spec##*:}
  "$cp" run --trace --view none -q -o "$out/steps/$w.rec" --report "$out/steps/$w.json" -f json \
    -- python3 "$wl/live_run.py" "$w" --seconds "$s" --nvtx >"$out/steps/$w.out" 2>&1
  echo "$w: exit $? $(grep -h 'ms/step' "$out/steps/$w.out") $(grep -h -o '"step_source": "[^"]*"' "$out/steps/$w.json") $(grep -h -o '"steps": [0-9]*' "$out/steps/$w.json" | head -1) $(du -sh "$out/steps/$w.rec" | cut -f1)" >&2
done
