#!/usr/bin/env bash
# Round F of docs/VALIDATION.md: every pair's estimate against the fix timed in the same
# round, all on one card, analysed on the GPU machine itself so that only the small
# results come back (the traces of 7 pairs x 2 rounds are ~135 MB, over what a device call
# returns).
#   tests/data/pairs/gpu_round_f.sh BIN_DIR OUT NAME ROUNDS PAIR:VARIANTS[@N] ...
# writes OUT/NAME.txt (remeasure.py's log, then interleaved.py's lines), OUT/NAME.json
# (interleaved.py --json: per pair and round the measured gain, each source's estimate,
# range, verdict and first remedy) and OUT/NAME.remeasured.json (every variant's timings),
# and deletes the traces. small_batch's whole-step capture is read against cuda-graphs
# (interleaved.py --alt) into OUT/NAME.alt.json when it was run.
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; name=$3; rounds=$4; shift 4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
work=$(mktemp -d)
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/$name.txt"
python3 "$here/remeasure.py" --out "$work" --rounds "$rounds" --seconds 2.5 --chokepoint "$bin/chokepoint" \
  --profile-steps resnet_workers=12 "$@" 2>&1 | tee -a "$out/$name.txt"
cp "$work/remeasured.json" "$out/$name.remeasured.json" 2>/dev/null
python3 "$here/interleaved.py" "$bin/chokepoint" "$work" --json "$out/$name.json" 2>&1 | tee -a "$out/$name.txt"
if ls "$work"/small_batch.wholegraph.r*.json >/dev/null 2>&1; then
  python3 "$here/interleaved.py" "$bin/chokepoint" "$work" --json "$out/$name.alt.json" \
    --alt small_batch=wholegraph:cuda-graphs 2>&1 | tee -a "$out/$name.txt"
fi
du -sh "$work" | tee -a "$out/$name.txt"
rm -rf "$work"
