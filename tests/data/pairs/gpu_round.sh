#!/usr/bin/env bash
# One call on the GPU machine: the profiler/tracer cost calibration (optional) and a set
# of pairs, everything packed into OUT as tar parts small enough to come back.
# Usage: tests/data/pairs/gpu_round.sh BIN_DIR OUT TAG [--overhead] PAIR...
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; tag=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/pairs-$tag; rm -rf "$work"; mkdir -p "$work" "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu,memory.used --format=csv >"$work/gpu.txt" 2>&1
python3 -c 'import torch, os; print(torch.__version__, torch.version.cuda, os.cpu_count())' >>"$work/gpu.txt" 2>&1
if [[ ${1:-} == --overhead ]]; then
  shift
  for m in plain shapes noshapes plain; do
    (cd "$here" && python3 overhead.py --mode $m --trace "$work/overhead_$m.json") 2>&1 | grep OVERHEAD | tee -a "$work/overhead.txt"
  done
  (cd "$here" && "$bin/chokepoint" run --trace --view none -q -o "$work/overhead.rec" -- python3 overhead.py --mode plain) 2>&1 |
    grep OVERHEAD | sed 's/"plain"/"cupti"/' | tee -a "$work/overhead.txt"
  rm -f "$work"/overhead_*.json
fi
bash "$here/record_pairs.sh" "$bin" "$work" "$@" 2>&1 | tee "$work/record.txt"
cat "$work/gpu.txt"
du -sh "$work"/* | sort -h | tail -5
tar czf - -C /tmp "pairs-$tag" | split -b 15M -d - "$out/$tag.tgz."
ls -la "$out"
