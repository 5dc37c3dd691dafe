#!/usr/bin/env bash
# The first remedy chokepoint names for a pair, where it is not the pair's own fix, applied
# as a fix of its own and timed (issue 10: a diagnosis is right when the fix it names gives
# the gain it promised). Per round, the broken variant is timed then profiled in one process
# and the remedy's variant timed in the next (remeasure.py, interleaved rounds); with a
# chokepoint in BIN_DIR, each round's trace is analyzed and its estimate of that remedy set
# against the same round's gain (interleaved.py --alt); without one, run interleaved.py on
# OUT/first_remedy later (the GPU machine needs only PyTorch).
# Usage: tests/data/pairs/gpu_first_remedy.sh BIN_DIR|- OUT [ROUNDS [PAIR:VARIANT=REMEDY ...]]
set -uo pipefail
bin=$1; out=$2; rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
specs=("${@:4}")
[ ${#specs[@]} -gt 0 ] || specs=(adamw_fused:wholegraph=cuda-graphs lstm_lm:wholegraph=cuda-graphs
  bert_item:phasegraphs=cuda-graphs gpt_autocast:tf32=tf32 mlp_tf32:autocast=autocast-bf16)
mkdir -p "$out/first_remedy"
export PYTHONUNBUFFERED=1
runs=(); alts=()
for s in "${specs[@]}"; do
  pair=${s%%:*}; rest=${s#*:}; variant=${rest%%=*}; remedy=${rest#*=}
  runs+=("$pair:profiled,$variant"); alts+=(--alt "$pair=$variant:$remedy")
done
python3 "$here/remeasure.py" --out "$out/first_remedy" --rounds "$rounds" --seconds 2.5 "${runs[@]}" \
  2>&1 | tee "$out/first_remedy.txt"
if [ -x "$bin/chokepoint" ]; then
  export LD_LIBRARY_PATH="$(cd "$bin" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  python3 "$here/interleaved.py" "$bin/chokepoint" "$out/first_remedy" "${alts[@]}" \
    --json "$out/first_remedy/estimates.json" 2>&1 | tee -a "$out/first_remedy.txt"
fi
