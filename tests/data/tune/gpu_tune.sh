#!/usr/bin/env bash
# `chokepoint tune` on the GPU machine (docs/VALIDATION.md, "tune"): the coordinate search
# and the whole grid on loader_bound_train.py (a planted best), and the steps mode (no
# --metric: the steps of a CUPTI trace) on two configurations.
# Usage: bash gpu_tune.sh BIN_DIR OUT [PHASES]   (BIN_DIR: chokepoint, its libraries, the
# tracer and loader_bound_train.py; PHASES: any of "tune steps grid", default all three).
# On the H200 (2026-12-02) a trial took 12-20 s: tune ~4 min (10 trials; less now that an
# out-of-memory trial stops at the error), steps ~1 min, the grid of 30 ~8 min: give the
# grid a call of its own. Each phase copies its trials file to OUT as soon as it ends.
set -u
BIN=$1
OUT=$2
PHASES=${3:-tune steps grid}
W=/tmp/tune-work
mkdir -p "$W"
export LD_LIBRARY_PATH=$BIN
S=$BIN/loader_bound_train.py
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nproc; python3 -c "import torch; print(torch.__version__)"; } > "$OUT/machine.txt" 2>&1
P=(--param batch=256,512,1024 --param workers=0,4,8,12,16 --param amp=off,bf16 --metric 'samples/s: ([0-9.]+)' --steps 2 --warmup 1 --timeout 60s)
CMD=(-- python3 "$S" --batch-size '{batch}' --workers '{workers}' --amp '{amp}')
for phase in $PHASES; do
  t0=$(date +%s)
  case $phase in
    tune) "$BIN/chokepoint" tune "${P[@]}" --max-trials 10 -o "$W/tune" -f json --report "$OUT/tune.json" "${CMD[@]}" ;;
    grid) "$BIN/chokepoint" tune "${P[@]}" --search grid -o "$W/grid" -f json --report "$OUT/grid.json" "${CMD[@]}" ;;
    steps) "$BIN/chokepoint" tune --param batch=256,512 --param workers=12 --param amp=bf16 --steps 20 --warmup 10 \
             --timeout 20s -o "$W/steps" -f json --report "$OUT/steps.json" -- python3 "$S" --batch-size '{batch}' \
             --workers '{workers}' --amp '{amp}' --nvtx
           cat "$W/steps"/trial-*/stdout.log | tail -4 ;;
  esac 2> "$OUT/$phase.err"
  cp "$W/$phase/trials.jsonl" "$OUT/${phase}_trials.jsonl" 2>/dev/null
  echo "${phase}_s $(($(date +%s) - t0))" >> "$OUT/machine.txt"
done
