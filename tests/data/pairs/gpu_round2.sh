#!/usr/bin/env bash
# The second GPU call of issue 10's validation: the host-bound pairs measured again in
# interleaved rounds (remeasure.py), the profiled runs again (the recorder's cost), and the
# new build under `run` (thread names, live verdicts) and `doctor`; packed into OUT.
# Usage: tests/data/pairs/gpu_round2.sh BIN_DIR OUT
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/round2; rm -rf "$work"; mkdir -p "$work" "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
python3 "$here/remeasure.py" --out "$work/remeasure" --rounds 2 --seconds 2.5 \
  decode_graphs:broken,fixed small_batch:broken,fixed,graphs adamw_fused:broken,fixed bert_item:broken,fixed \
  empty_cache:broken,fixed gpt_autocast:broken,fixed tabular_pinned:broken,fixed 2>&1 | tee "$work/remeasure.txt"
python3 "$here/remeasure.py" --out "$work/resnet" --rounds 1 resnet_workers:broken,fixed@6 2>&1 | tee "$work/resnet.txt"
python3 "$here/remeasure.py" --out "$work/profiled" --rounds 1 --seconds 2.5 \
  decode_graphs:profiled small_batch:profiled adamw_fused:profiled 2>&1 | tee "$work/profiled.txt"
for p in bert_item gil_threads_gpu; do
  (cd "$here" && timeout 120 "$bin/chokepoint" run --view none -o "$work/run_$p.rec" --report "$work/run_$p.json" -f json \
     -- python3 "$p.py" --seconds 3) >"$work/run_$p.out" 2>&1
  echo "run $p: exit $? $(grep -o '"bound": "[a-z]*"' "$work/run_$p.json" | head -1)"
done
timeout 60 "$bin/chokepoint" doctor >"$work/doctor.txt" 2>&1; echo "doctor exit $?"
tar czf "$out/C.tgz" -C /tmp round2
ls -la "$out"
