#!/usr/bin/env python3
"""`diff` against what gpu_aa.sh timed (issue 45): per program, every A/A pair of its
broken runs (each run a fresh process: its untraced timings, then 4 profiled steps) and
the three runs of each side together, and each round's broken run against the same
round's fixed run, with the untraced timed gain beside the headline.

Usage: python3 tests/data/pairs/aa_table.py BUILD/chokepoint OUT   (OUT: gpu_aa.sh's)
"""
import glob, itertools, json, math, os, subprocess, sys

exe, out = sys.argv[1], sys.argv[2]
env = dict(os.environ, CHOKEPOINT_PROFILE="none")


def diff(before, after):
    args = [exe, "diff", "-q", "-f", "json"] + before + (["--"] if len(before) > 1 or len(after) > 1 else []) + after
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)["step"]


def timed(path):
    try:
        return json.load(open(path))["median_ms"]
    except (OSError, ValueError, KeyError):
        return None


aa_called = aa_total = 0
print("## A/A (broken runs of one program against each other)\n")
print("| program | runs | untraced timed spread | diffs called a change |")
print("|---|---:|---:|---:|")
for d in sorted(glob.glob(os.path.join(out, "*/"))):
    name = os.path.basename(os.path.dirname(d))
    runs = sorted(glob.glob(os.path.join(d, "broken-*.kineto.json.gz")))
    if len(runs) < 2:
        continue
    t = [timed(r.replace(".kineto.json.gz", ".json")) for r in runs]
    t = [x for x in t if x]
    called = 0
    pairs = list(itertools.combinations(runs, 2))
    for a, b in pairs:
        s = diff([a], [b])
        called += 1 if s and not s["within_noise"] else 0
    aa_called += called
    aa_total += len(pairs)
    spread = f"{max(t) / min(t):.3f}x" if t else "-"
    print(f"| {name} | {len(runs)} | {spread} | {called} of {len(pairs)} |")

print(f"\nA/A: {aa_called} of {aa_total} diffs called a change.\n")
print("## Pairs (each round's broken run against the same round's fix; all rounds together)\n")
print("| program | round | timed untraced | headline | within 15% or range holds it |")
print("|---|---|---:|---|---|")
for d in sorted(glob.glob(os.path.join(out, "*/"))):
    name = os.path.basename(os.path.dirname(d))
    fixed = sorted(glob.glob(os.path.join(d, "fixed-*.kineto.json.gz")))
    if not fixed:
        continue
    bs, fs, gains = [], [], []
    for f in fixed:
        r = f.split("fixed-")[1].split(".")[0]
        b = os.path.join(d, f"broken-{r}.kineto.json.gz")
        tb, tf = timed(os.path.join(d, f"broken-{r}.json")), timed(os.path.join(d, f"fixed-{r}.json"))
        if not os.path.exists(b) or not tb or not tf:
            continue
        bs.append(b)
        fs.append(f)
        gain = tb / tf
        gains.append(gain)
        s = diff([b], [f])
        if not s or s["headline"]["speedup"] is None:
            print(f"| {name} | {r} | {gain:.3g}x | no step figure | - |")
            continue
        h, rng = s["headline"]["speedup"], s["headline"]["range"]
        ok = abs(h / gain - 1) <= 0.15 or (rng and rng[0] <= gain <= rng[1])
        print(f"| {name} | {r} | {gain:.3g}x | {s['headline']['words']} | {'yes' if ok else 'NO'} |")
    if len(bs) >= 2:
        s = diff(bs, fs)
        g = math.exp(sum(math.log(x) for x in gains) / len(gains))
        print(f"| {name} | all {len(bs)} | {g:.3g}x | {s['headline']['words'] if s else '-'} | |")
