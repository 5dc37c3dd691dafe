#!/usr/bin/env bash
# Trace windows on the GPU machine (issue 14; docs/RECORDING.md "Trace windows"):
#  1. interleaved rounds of a launch-bound loop (window_loop.py, NVTX step ranges):
#     plain python, under `run` (no trace), `run --trace-steps W:C`, `run --trace` (whole);
#     step times inside and outside the window;
#  2. the same for a bf16 GEMM loop (plain, window);
#  3. a steps window counted from synchronizations (no NVTX), a timed window, a repeated one;
#  4. on demand: requests to a running job, a second request while one is in progress, a
#     window the job exits inside, and the refusals (no such process, not traced, fixed
#     window);
#  5. analyze of the recordings, together and one window alone;
#  6. how a window switches the API records on (CHOKEPOINT_TRACE_API_SWITCH=cbid|kind):
#     the records each way gives, and the window's step time.
# Usage: [SECTIONS="1 2 3 4 6"] tests/data/tracer/gpu_windows.sh BIN_DIR OUT [ROUNDS]
#   BIN_DIR holds chokepoint and libchokepoint_tracer.so.
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd); loop="$here/window_loop.py"
cpt() { timeout -k 5 150 "$bin/chokepoint" "$@"; }  # a hang in the tracer must not hold the machine
export CHOKEPOINT_TRACER_LIB="$bin/libchokepoint_tracer.so"
mkdir -p "$out"
N=${STEPS:-1500}; W=600; C=50
counts() { python3 "$here/count_trace.py" "$@" | grep -v -E '"marker_name_|^  "[0-9]' ; }

sections=${SECTIONS:-1 2 3 4 6}
on() { [[ " $sections " == *" $1 "* ]]; }
if on 1; then
echo "== 1. launch-bound rounds (N=$N, window $W:$C)" >&2
for r in $(seq 1 "$rounds"); do
  python3 "$loop" "$N" "$out/plain.$r.json" --nvtx >"$out/plain.$r.txt" 2>&1
  cpt run --view none -q -o "$out/run.$r.rec" -- python3 "$loop" "$N" "$out/run.$r.json" --nvtx >"$out/run.$r.txt" 2>&1
  cpt run --trace-steps "$W:$C" --view none -q -o "$out/win.$r.rec" \
    -- python3 "$loop" "$N" "$out/win.$r.json" --nvtx >"$out/win.$r.txt" 2>&1
  cpt run --trace --view none -q -o "$out/whole.$r.rec" \
    -- python3 "$loop" "$N" "$out/whole.$r.json" --nvtx >"$out/whole.$r.txt" 2>&1
  for m in plain run win whole; do echo "  round $r $m: $(tail -1 "$out/$m.$r.txt")" >&2; done
done
ls -la "$out"/win.1.rec "$out"/whole.1.rec >"$out/files.txt" 2>&1
counts "$out"/win.1.rec >"$out/win.counts.json"
python3 "$here/count_trace.py" "$out"/win.1.rec | grep -E '"marker_name_step' | wc -l >"$out/win.nvtx_steps.txt"
counts "$out"/whole.1.rec >"$out/whole.counts.json"
cpt analyze "$out/win.1.rec" -f json -o "$out/win.report.json" 2>"$out/win.analyze.err"
cpt analyze "$out"/win.1.rec/trace-*-w1.cptrace >"$out/win.alone.txt" 2>&1
cpt analyze "$out/whole.1.rec" -f json -o "$out/whole.report.json" 2>"$out/whole.analyze.err"

fi
if on 2; then
echo "== 2. GEMM-bound rounds" >&2
for r in $(seq 1 "$rounds"); do
  python3 "$loop" 300 "$out/gplain.$r.json" --nvtx --gemm >"$out/gplain.$r.txt" 2>&1
  cpt run --trace-steps 100:20 --view none -q -o "$out/gwin.$r.rec" \
    -- python3 "$loop" 300 "$out/gwin.$r.json" --nvtx --gemm >"$out/gwin.$r.txt" 2>&1
  for m in gplain gwin; do echo "  round $r $m: $(tail -1 "$out/$m.$r.txt")" >&2; done
done

fi
if on 3; then
echo "== 3. sync-counted, timed, repeated windows" >&2
cpt run --trace-steps "$W:$C" --view none -q -o "$out/sync.rec" -- python3 "$loop" "$N" "$out/sync.json" >"$out/sync.txt" 2>&1
counts "$out/sync.rec" >"$out/sync.counts.json"
cpt run --trace-time 2s:1s --view none -q -o "$out/time.rec" -- python3 "$loop" 3000 "$out/time.json" >"$out/time.txt" 2>&1
counts "$out/time.rec" >"$out/time.counts.json"
cpt run --trace-steps 100:20 --trace-every 1s --view none -q -o "$out/every.rec" \
  -- python3 "$loop" 3000 "$out/every.json" --nvtx >"$out/every.txt" 2>&1
ls "$out/every.rec" >"$out/every.files.txt"
counts "$out/every.rec" >"$out/every.counts.json"
cpt analyze "$out/every.rec" >"$out/every.report.txt" 2>&1

fi
if on 4; then
echo "== 4. on demand" >&2
od="$out/od.rec"
cpt run --trace=on-demand --view none -q -o "$od" -- python3 "$loop" 4000 "$out/od.json" --nvtx >"$out/od.txt" 2>&1 &
runpid=$!
for _ in $(seq 1 300); do ls "$od"/control-*.sock >/dev/null 2>&1 && break; sleep 0.1; done
sock=$(ls "$od"/control-*.sock 2>/dev/null | head -1); pypid=$(basename "$sock" .sock); pypid=${pypid#control-}
{
  echo "socket: $sock mode $(stat -c %a "$sock") run pid $runpid python pid $pypid"
  sleep 1
  cpt trace --pid "$pypid" --steps 20; echo "exit $?"
  cpt trace --pid "$pypid" --duration 1s; echo "exit $? (expected: a window in progress)"
  sleep 1
  cpt trace --pid "$runpid" --duration 500ms; echo "exit $? (asked through run's pid)"
  sleep 1.5
  cpt trace --pid 999999 --steps 1; echo "exit $? (expected: no process)"
  sleep 30 & other=$!
  cpt trace --pid "$other" --steps 1; echo "exit $? (expected: not started by run --trace)"
  kill "$other"
  cpt trace --pid "$pypid" --duration 60s; echo "exit $? (the job exits inside this window)"
} >"$out/od.requests.txt" 2>&1
wait "$runpid"; echo "run exit $?" >>"$out/od.requests.txt"
ls -la "$od" >>"$out/od.requests.txt"
counts "$od" >"$out/od.counts.json"
cpt analyze "$od" -f json -o "$out/od.report.json" 2>"$out/od.analyze.err"
cpt run --trace-steps 100000:1 --view none -q -o "$out/fixed.rec" -- python3 "$loop" 3000 "$out/fixed.json" --nvtx >/dev/null 2>&1 &
fixed=$!
sleep 6
cpt trace --pid "$fixed" --steps 1 >>"$out/od.requests.txt" 2>&1; echo "exit $? (expected: fixed window)" >>"$out/od.requests.txt"
wait "$fixed"
fi
if on 6; then
echo "== 6. API records in a window, by switch" >&2
for sw in cbid kind; do
  CHOKEPOINT_TRACE_API_SWITCH=$sw cpt run --trace-steps 300:50 --view none -q -o "$out/api_$sw.rec" \
    -- python3 "$loop" 600 "$out/api_$sw.json" --nvtx >"$out/api_$sw.txt" 2>&1
  counts "$out/api_$sw.rec" >"$out/api_$sw.counts.json"
  python3 - "$out/api_$sw.json" "$sw" <<'PY' >&2
import json, statistics, sys
v = json.load(open(sys.argv[1]))["ms"]
print(f"  {sys.argv[2]}: window steps {statistics.median(v[300:350]):.3f} ms, outside {statistics.median(v[50:298] + v[352:]):.3f} ms")
PY
  grep -E '"(kernel|runtime_api|driver_api|marker_start|marker_end)"' "$out/api_$sw.counts.json" | tr -d '\n' >&2; echo >&2
done
fi
if [ -f "$out/plain.1.json" ] && [ -f "$out/gplain.1.json" ]; then
echo "== summary" >&2
python3 - "$out" "$rounds" "$W" "$C" <<'PY' | tee "$out/summary.txt" >&2
import json, statistics, sys
out, rounds, W, C = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def ms(name): return json.load(open(f"{out}/{name}.json"))["ms"]
def med(v): return statistics.median(v) if v else float("nan")
for prefix, modes, w, c in (("", ["plain", "run", "win", "whole"], W, C), ("g", ["gplain", "gwin"], 100, 20)):
    rows = {m: [] for m in modes}
    for r in range(1, rounds + 1):
        for m in modes:
            v = ms(f"{m}.{r}")
            skip = 50  # first steps: warm-up
            inside = v[w:w + c]                      # steps W+1 .. W+C (0-based W .. W+C-1)
            outside = v[skip:w - 2] + v[w + c + 2:]
            rows[m].append((med(v[skip:]), med(outside), med(inside)))
    base = med([x[0] for x in rows[modes[0]]])
    for m in modes:
        a = med([x[0] for x in rows[m]]); o = med([x[1] for x in rows[m]]); i = med([x[2] for x in rows[m]])
        print(f"{m:7s} all {a:.3f} ms ({a / base:.3f}x)  outside-window steps {o:.3f} ms ({o / base:.3f}x)  "
              f"window steps {i:.3f} ms ({i / base:.3f}x)  rounds {[round(x[0], 3) for x in rows[m]]}")
PY
fi
cat "$out"/win.nvtx_steps.txt "$out"/od.requests.txt >&2
grep -E '"(kernel|runtime_api|driver_api|files|unended_files|marker_start)"' "$out"/*.counts.json >&2
# What comes back: the small files, and one window's trace as a fixture candidate.
rm -rf "$out"/whole.*.rec/*.cptrace "$out"/gwin.*.rec "$out"/run.*.rec "$out"/fixed.rec
tar czf "$out/results.tgz" -C "$out" --exclude results.tgz --exclude known_counts . 2>/dev/null
