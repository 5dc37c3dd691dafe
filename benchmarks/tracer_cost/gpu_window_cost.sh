#!/bin/bash
# The tracer's cost inside a window against torch.profiler's, each measured inside one
# process (windows repeated through the run, steps inside vs steps outside), on the
# launch-bound loop and the bf16 GEMM loop of tests/data/tracer/window_loop.py:
#   bash benchmarks/tracer_cost/gpu_window_cost.sh PREBUILT OUT [ROUNDS]
set -u
pre=$(cd "$1" && pwd); out=$2; rounds=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
loop=$here/../../tests/data/tracer/window_loop.py
export CHOKEPOINT_TRACER_LIB=$pre/libchokepoint_tracer.so LD_LIBRARY_PATH=$pre:${LD_LIBRARY_PATH:-}
w=$(mktemp -d)
cpt() { timeout -k 5 200 "$pre/chokepoint" "$@"; }
for r in $(seq "$rounds"); do
  cpt run --trace-steps 100:100 --trace-every 0.7s --view none -q -o "$w/lb$r.rec" \
    -- python3 "$loop" 4000 "$w/lb$r.json" --nvtx > /dev/null 2>&1
  echo "launch-bound round $r $(python3 "$here/window_cost.py" chokepoint "$w/lb$r.json" "$w/lb$r.rec")"
  python3 "$loop" 4000 "$w/lbp$r.json" --nvtx --profiler-cycle 150:100 > /dev/null 2>&1
  echo "launch-bound round $r $(python3 "$here/window_cost.py" profiler "$w/lbp$r.json")"
done
for r in $(seq "$rounds"); do
  cpt run --trace-steps 20:20 --trace-every 0.5s --view none -q -o "$w/g$r.rec" \
    -- python3 "$loop" 600 "$w/g$r.json" --nvtx --gemm > /dev/null 2>&1
  echo "gemm round $r $(python3 "$here/window_cost.py" chokepoint "$w/g$r.json" "$w/g$r.rec")"
  python3 "$loop" 600 "$w/gp$r.json" --nvtx --gemm --profiler-cycle 40:20 > /dev/null 2>&1
  echo "gemm round $r $(python3 "$here/window_cost.py" profiler "$w/gp$r.json")"
done | tee -a /dev/null
ls "$w/lb1.rec" | head; du -sh "$w/lb1.rec"
