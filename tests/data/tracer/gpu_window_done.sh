#!/usr/bin/env bash
# Issue 14's "done when" in one call: a launch-bound job (window_loop.py, NVTX step ranges)
# traced for 20 steps in its middle, against the same job traced whole:
#   - how long after the window's last step its trace file reads in `analyze` (a watcher
#     polls the recording every 50 ms),
#   - the window's step times against the whole trace's for the same 20 steps and against
#     the job's own (perf_counter) times, and the untraced steps outside the window.
#   bash tests/data/tracer/gpu_window_done.sh PREBUILT OUT [STEPS]
set -u
pre=$(cd "$1" && pwd); out=$2; steps=${3:-16000}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
export CHOKEPOINT_TRACER_LIB=$pre/libchokepoint_tracer.so LD_LIBRARY_PATH=$pre:${LD_LIBRARY_PATH:-}
w=$(mktemp -d); mid=$((steps / 2))
cpt() { timeout -k 5 240 "$pre/chokepoint" "$@"; }
cpt run --trace-steps "$mid:20" --view none -q -o "$w/win.rec" -- \
  python3 "$here/window_loop.py" "$steps" "$w/win.json" --nvtx --end-times > "$w/win.out" 2>&1 &
job=$!
python3 - "$pre/chokepoint" "$w/win.rec" "$w/ready.json" "$job" <<'PY'
import glob, json, os, subprocess, sys, time
cp, rec, out, job = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
seen = None
while True:
    files = glob.glob(os.path.join(rec, "trace-*-w1.cptrace"))
    if files:
        seen = seen or time.time()
        r = subprocess.run([cp, "analyze", "-f", "json", files[0]], capture_output=True, text=True)
        if r.returncode == 0:
            try:
                steps = json.loads(r.stdout)["window"]["steps"]
            except Exception:
                steps = 0
            if steps > 0:
                json.dump({"file_seen_s": seen, "analyzable_s": time.time(), "steps": steps}, open(out, "w"))
                break
    try:
        os.kill(job, 0)
    except OSError:
        break
    time.sleep(0.05)
PY
wait $job
cpt run --trace --view none -q -o "$w/whole.rec" -- \
  python3 "$here/window_loop.py" "$steps" "$w/whole.json" --nvtx > "$w/whole.out" 2>&1
"$pre/chokepoint" analyze -f json "$w"/win.rec/trace-*-w1.cptrace > "$w/win.report.json" 2> "$w/win.err"
"$pre/chokepoint" analyze -f json "$w/whole.rec" > "$w/whole.report.json" 2> "$w/whole.err"
python3 - "$w" "$mid" <<'PY' | tee "$out/window_done.txt"
import json, statistics, sys
w, mid = sys.argv[1], int(sys.argv[2])
win, whole = json.load(open(f"{w}/win.json")), json.load(open(f"{w}/whole.json"))
rw, rh = json.load(open(f"{w}/win.report.json")), json.load(open(f"{w}/whole.report.json"))
inside = list(range(mid + 1, mid + 21))  # NVTX steps are numbered from 1
def med(xs): return statistics.median(xs) if xs else float("nan")
own_in = med([win["ms"][n - 1] for n in inside])
own_out = med([x for i, x in enumerate(win["ms"], 1) if i > 100 and not (mid - 3 <= i <= mid + 24)])
whole_own = med([whole["ms"][n - 1] for n in inside])
whole_own_all = med(whole["ms"][100:])
ww = rw["window"]; hw = rh["window"]
whole_steps = dict(zip(hw["step_numbers"], hw["step_ms"]))
whole_same = med([whole_steps[n] for n in inside if n in whole_steps])
print(f"window: {ww['steps']} steps ({ww['step_source']}), p50 {ww['step_time_ms']['p50']:.3f} ms")
print(f"whole trace, the same steps {inside[0]}-{inside[-1]}: p50 {whole_same:.3f} ms ({hw['steps']} steps in all, p50 {hw['step_time_ms']['p50']:.3f})")
print(f"job's own times: windowed run inside {own_in:.3f} ms, outside {own_out:.3f} ms; whole-traced run same steps {whole_own:.3f}, all {whole_own_all:.3f} ms")
try:
    r = json.load(open(f"{w}/ready.json"))
    end = win["end_s"][inside[-1] - 1]
    print(f"window's file seen {r['file_seen_s'] - end:+.2f} s, analyzable {r['analyzable_s'] - end:+.2f} s after its last step")
except Exception as e:
    print("readiness not measured:", e)
PY
cp "$w/win.report.json" "$out/" 2>/dev/null; cp "$w"/*.out "$out/" 2>/dev/null
ls -la "$w/win.rec" | head
