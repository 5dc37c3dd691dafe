#!/usr/bin/env bash
# small_batch's cuda-graphs estimate against a whole-step capture (issue 10): the broken
# step, forward+backward graphed (--graphs), the whole step in one graph (--whole-graph)
# and a profiled broken run, in interleaved rounds (remeasure.py); each round's profiled
# trace analyzed by this build, so estimate and measurement come from one session.
# Usage: tests/data/pairs/gpu_whole_graph.sh BIN_DIR OUT [ROUNDS]
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
python3 "$here/remeasure.py" --out "$out/whole_graph" --rounds "$rounds" --seconds 2.5 \
  small_batch:broken,graphs,wholegraph,profiled 2>&1 | tee "$out/whole_graph.txt"
for t in "$out"/whole_graph/small_batch.profiled.r*.json.gz; do
  "$bin/chokepoint" analyze "$t" -f json -o "${t%.json.gz}.report.json" >/dev/null 2>&1
  python3 - "${t%.json.gz}.report.json" <<'PY' | tee -a "$out/whole_graph.txt"
import json, sys
r = json.load(open(sys.argv[1]))
est = {m["id"]: m.get("estimated_speedup") for m in r.get("remedies", [])}
print(sys.argv[1].rsplit("/", 1)[-1], "verdict", r["verdict"]["bound"], "cuda-graphs", est.get("cuda-graphs"),
      "step p50 ms", r["window"]["step_time_ms"].get("p50"))
PY
done
