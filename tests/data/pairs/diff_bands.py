#!/usr/bin/env python3
"""How far `diff`'s corrected step figure (a trace's steps replayed without the recorder's
own cost, report `replay.plain_step_ms`) is from the untraced run of the same variant
(measured.json), per recorder and recorder share. Makes the table of docs/VALIDATION.md
"diff: the headline" that kProfilerBands and kTracerBands (src/pipeline/run_diff.h) come from.

Usage: python3 tests/data/pairs/diff_bands.py BUILD/chokepoint
"""
import glob, json, os, subprocess, sys

exe = sys.argv[1] if len(sys.argv) > 1 else "build/chokepoint"
here = os.path.dirname(os.path.abspath(__file__))
env = dict(os.environ, CHOKEPOINT_PROFILE="none")


def analyze(path):
    out = subprocess.run([exe, "analyze", path, "-f", "json", "-q"], capture_output=True, text=True, env=env).stdout
    r = json.loads(out)
    p50 = r["window"]["step_time_ms"]["p50"] if r["window"].get("steps") else None
    return p50, (r.get("replay") or {}).get("plain_step_ms"), (r.get("replay") or {}).get("recorder")


print(f"{'pair':18} {'run':7} {'recorder':18} {'untraced':>9} {'profiled':>9} {'corrected':>9} {'share':>6} {'error':>7}")
for m_path in sorted(glob.glob(os.path.join(here, "*/measured.json"))):
    pair_dir = os.path.dirname(m_path)
    m = json.load(open(m_path))
    ra = m.get("round_a", {})
    runs = [("trace.json.gz", "broken", ra.get("broken")), ("fixed.json.gz", "fixed", ra.get("fixed")),
            ("rerun.json.gz", "rerun", m.get("rerun")), ("traced.rec", "traced", ra.get("broken"))]
    for f, key, ref in runs:
        path = os.path.join(pair_dir, f)
        if not os.path.exists(path) or not ref or "median_ms" not in ref:
            continue
        untraced = ref["median_ms"]
        p50, plain, recorder = analyze(path)
        if not p50 or not plain:
            continue
        share = 1 - plain / p50
        err = plain / untraced - 1
        print(f"{os.path.basename(pair_dir):18} {key:7} {recorder or '-':18} {untraced:9.3g} {p50:9.3g} {plain:9.3g} "
              f"{100 * share:5.1f}% {100 * err:+6.1f}%")
