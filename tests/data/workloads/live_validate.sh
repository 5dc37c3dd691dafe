#!/usr/bin/env bash
# `chokepoint run` / `watch` on the GPU machine: known-bottleneck workloads under run, a
# capture of the live panel through a pseudo-terminal, watch of a running job, and
# chokepoint's own CPU cost next to polling nvidia-smi once a second.
# Usage: tests/data/workloads/live_validate.sh CHOKEPOINT OUT [SECONDS] [WORKLOAD...]
# Results: OUT/<workload>.json (report), OUT/<workload>.txt (stderr: lines + report),
# OUT/<workload>.rec/ (recording), OUT/panel.typescript, OUT/cost.txt.
set -uo pipefail
cp=$(readlink -f "$1"); out=$2; secs=${3:-20}; shift 3 || shift $#
here=$(cd "$(dirname "$0")" && pwd)
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(input_bound healthy_bf16 launch_bound pageable_copy gil_threads)
mkdir -p "$out"

for w in "${workloads[@]}"; do
  echo "== $w" >&2
  TIMEFORMAT="%R s wall, %U s user, %S s sys (chokepoint + workload)"
  time "$cp" run --view lines -o "$out/$w.rec" --report "$out/$w.json" -f json \
    -- python3 "$here/live_run.py" "$w" --seconds "$secs" >"$out/$w.stdout" 2>"$out/$w.txt"
  echo "exit $?" >>"$out/$w.txt"
  tail -n 3 "$out/$w.txt" >&2
done

# The panel as a terminal shows it: a 160x48 pseudo-terminal, recorded by script(1).
echo "== panel" >&2
script -q -e -c "stty rows 48 cols 160; $cp run --view panel -o $out/panel.rec -- python3 $here/live_run.py input_bound --fixed --seconds 10" \
  "$out/panel.typescript" >/dev/null 2>&1
echo "panel exit $?" >&2

# watch: attach to a job that is already running.
echo "== watch" >&2
python3 "$here/live_run.py" input_bound --seconds 15 >"$out/watch.stdout" 2>&1 &
job=$!
sleep 6
"$cp" watch --pid "$job" --view lines -o "$out/watch.rec" --report "$out/watch.json" -f json 2>"$out/watch.txt"
echo "watch exit $?" >>"$out/watch.txt"
wait "$job"

# Cost: chokepoint's CPU while sampling a busy GPU (its own figure, printed at the end),
# and nvidia-smi polling once a second for the same time.
echo "== cost" >&2
{
  grep -h "chokepoint used" "$out"/*.txt
  echo "nvidia-smi -l 1 for ${secs} s:"
  TIMEFORMAT="%R s wall, %U s user, %S s sys"
  time timeout "$secs" nvidia-smi \
    --query-gpu=utilization.gpu,memory.used,power.draw,clocks.sm,pcie.link.gen.current --format=csv -l 1 >/dev/null
} >"$out/cost.txt" 2>&1
cat "$out/cost.txt" >&2
