#!/usr/bin/env bash
# Whether a whole-job trace (`run --trace`) costs more per call than a window because of how
# it switches the API records on: per call id (cuptiActivityEnableRuntimeApi for each call
# taken, the whole trace's way) or by kind (cuptiActivityEnable, then each other call off:
# a window's way). CHOKEPOINT_TRACE_API_SWITCH=cbid|kind picks. Interleaved rounds of the
# launch-bound loop (window_loop.py) and decode_graphs (tests/data/pairs): plain, whole
# trace by call id, whole trace by kind. Prints each run's median step.
# Usage: benchmarks/tracer_cost/gpu_whole_switch.sh BIN_DIR OUT [ROUNDS]
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; rounds=${3:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
loop() {  # MODE NAME OUTFILE: one run of the loop NAME
  local mode=$1 name=$2 f=$3 cmd
  case $name in
    loop) cmd=(python3 "$root/tests/data/tracer/window_loop.py" 1500 "$f") ;;
    decode) cmd=(python3 "$root/tests/data/pairs/decode_graphs.py" --seconds 2 --result "$f") ;;
  esac
  case $mode in
    plain) "${cmd[@]}" >/dev/null 2>&1 ;;
    cbid|kind) CHOKEPOINT_TRACE_API_SWITCH=$mode "$bin/chokepoint" run --trace --view none -q -o "$out/rec.$name.$mode" \
        --force -- "${cmd[@]}" >/dev/null 2>&1 ;;
  esac
  python3 - "$f" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
print(f"{statistics.median(d['ms'][50:]):.3f}" if "ms" in d else f"{d['median_ms']:.3f}")
PY
}
for r in $(seq 1 "$rounds"); do
  for name in loop decode; do
    line="round $r $name:"
    for mode in plain cbid kind; do
      line+=" $mode $(loop $mode $name "$out/$name.$mode.r$r.json")"
    done
    echo "$line" | tee -a "$out/whole_switch.txt"
  done
done
# Both ways must record the API calls the analyses read: steps and launch threads.
for name in loop decode; do
  for mode in cbid kind; do
    "$bin/chokepoint" analyze "$out/rec.$name.$mode" -f json -o "$out/report.$name.$mode.json" >/dev/null 2>&1
    python3 - "$out/report.$name.$mode.json" "$name $mode" <<'PY' | tee -a "$out/whole_switch.txt"
import json, sys
r = json.load(open(sys.argv[1]))
w = r["window"]
print(sys.argv[2], "steps", w.get("steps"), "p50", w["step_time_ms"].get("p50"), "verdict", r["verdict"]["bound"],
      "findings", [f["id"] for f in r["findings"]][:4], "imported", r.get("import_stats", {}))
PY
  done
done
