#!/usr/bin/env bash
# Issue 10's estimates against fixes timed in the same session (round D): the pairs whose
# single-process comparisons (round A) were furthest off, in interleaved rounds
# (remeasure.py): per round and pair, the broken variant timed then profiled in one process
# ("profiled"), the fix timed in the next, and (decode_graphs) the broken variant under
# `chokepoint run --trace`. interleaved.py then sets each round's estimates against the same
# round's fix. resnet_workers is profiled over 12 steps (its 4 workers deliver in bursts of
# about four: 4 profiled steps caught one burst's waits, 12 catch three cycles).
# Usage: tests/data/pairs/gpu_interleaved.sh BIN_DIR OUT [ROUNDS]
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
python3 "$here/remeasure.py" --out "$out/round_d" --rounds "$rounds" --seconds 2.5 --chokepoint "$bin/chokepoint" \
  --profile-steps resnet_workers=12 \
  decode_graphs:profiled,fixed,traced adamw_fused:profiled,fixed resnet_workers:profiled,fixed@6 \
  2>&1 | tee "$out/round_d.txt"
