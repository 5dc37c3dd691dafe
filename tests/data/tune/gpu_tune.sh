#!/usr/bin/env bash
# `chokepoint tune` on the GPU machine (docs/VALIDATION.md, "tune"): the coordinate search
# and the whole grid on loader_bound_train.py (a planted best), then the steps mode (no
# --metric: the steps of a CUPTI trace) on two configurations.
# Usage: bash gpu_tune.sh BIN_DIR OUT   (BIN_DIR: chokepoint, its libraries and the scripts)
set -u
BIN=$1
OUT=$2
W=/tmp/tune-work
rm -rf "$W" && mkdir -p "$W"
export LD_LIBRARY_PATH=$BIN
S=$BIN/loader_bound_train.py
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nproc; python3 -c "import torch; print(torch.__version__)"; } > "$OUT/machine.txt" 2>&1
P=(--param batch=256,512,1024 --param workers=0,4,8,12,16 --param amp=off,bf16 --metric 'samples/s: ([0-9.]+)' --steps 2 --warmup 1 --timeout 60s)
CMD=(-- python3 "$S" --batch-size '{batch}' --workers '{workers}' --amp '{amp}')
t0=$(date +%s.%N)
"$BIN/chokepoint" tune "${P[@]}" --max-trials 10 -o "$W/tune" -f json --report "$OUT/tune.json" "${CMD[@]}" 2> "$OUT/tune.err"
t1=$(date +%s.%N)
"$BIN/chokepoint" tune "${P[@]}" --search grid --budget 200s -o "$W/grid" -f json --report "$OUT/grid.json" "${CMD[@]}" 2> "$OUT/grid.err"
t2=$(date +%s.%N)
"$BIN/chokepoint" tune --param batch=256,512 --param workers=12 --param amp=bf16 --steps 20 --warmup 10 --timeout 20s \
  -o "$W/steps" -f json --report "$OUT/steps.json" -- python3 "$S" --batch-size '{batch}' --workers '{workers}' \
  --amp '{amp}' --nvtx 2> "$OUT/steps.err"
t3=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN{printf "tune_s %.1f grid_s %.1f steps_s %.1f\n", b-a, c-b, d-c}' >> "$OUT/machine.txt"
cat "$W/steps"/trial-*/stdout.log | tail -4 >> "$OUT/steps.err"
cp "$W/tune/trials.jsonl" "$OUT/tune_trials.jsonl"
cp "$W/grid/trials.jsonl" "$OUT/grid_trials.jsonl"
