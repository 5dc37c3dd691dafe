#!/usr/bin/env python3
"""`diff`'s same-job check over every pair of Kineto fixtures (tests/data/kineto and the
validation pairs): which pairs it calls the same program and which different, against the
truth (the same pair directory, or a fixture and its _stack twin). Makes docs/VALIDATION.md
"diff: the same job"; kSameJob and kSameKernels (src/analyses/fingerprint.h) come from it.

Usage: python3 tests/data/pairs/same_job_table.py BUILD/chokepoint
"""
import glob, itertools, json, os, subprocess, sys

exe = sys.argv[1] if len(sys.argv) > 1 else "build/chokepoint"
data = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env = dict(os.environ, CHOKEPOINT_PROFILE="none")
files = sorted(glob.glob(f"{data}/kineto/*.json.gz")) + sorted(glob.glob(f"{data}/pairs/*/*.json.gz"))


def program(path):
    rel = os.path.relpath(path, data)
    return os.path.dirname(rel) if rel.startswith("pairs") else rel.replace("_stack", "")


counts = {}
for a, b in itertools.combinations(files, 2):
    out = subprocess.run([exe, "diff", a, b, "-q", "-f", "json"], capture_output=True, text=True, env=env).stdout
    j = json.loads(out)["same_job"]
    truth = "same" if program(a) == program(b) else "different"
    counts[(truth, j["verdict"])] = counts.get((truth, j["verdict"]), 0) + 1
    if (truth == "same") != (j["verdict"] != "different"):
        print(f"{truth:9} called {j['verdict']:9} kernels {j['kernel_similarity']} shapes {j['shape_similarity']}: "
              f"{os.path.relpath(a, data)} {os.path.relpath(b, data)}")
for (truth, called), n in sorted(counts.items()):
    print(f"{truth} programs called {called}: {n}")
