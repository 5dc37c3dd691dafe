#!/usr/bin/env python3
"""Measures the validation pairs again in interleaved rounds: every variant of every pair
once per round, each in a fresh process, so that the host's drift (the GPU machine's CPU
speed moved 20-30% within minutes) falls on all variants alike. Prints, per pair, the
median over rounds of each variant's throughput and the speedups of the fixes.

    python3 remeasure.py --out DIR --rounds 2 --seconds 2.5 decode_graphs:broken,fixed \\
        small_batch:broken,fixed,graphs resnet_workers:broken,fixed@6

VARIANT: broken (no flag), fixed (--fix), graphs (--graphs), wholegraph (--whole-graph),
tf32 (--tf32), autocast (--autocast), phasegraphs (--phase-graphs),
profiled (broken, then 4 profiled steps; `--profile-steps PAIR=N`: N), traced (broken under
`chokepoint run --trace`, a third of the seconds; needs `--chokepoint BIN`), tracednoev (the
same with CHOKEPOINT_TRACE_EVENTS=0: no CUDA_EVENT records); @S after a
pair's variants sets its timed seconds. Every variant's file is named PAIR.VARIANT.rROUND.*
so that each round's estimates (from its profiled trace and traced recording) can be set
against the same round's timed fix (interleaved.py).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = {"broken": [], "fixed": ["--fix"], "graphs": ["--graphs"], "wholegraph": ["--whole-graph"], "tf32": ["--tf32"],
         "autocast": ["--autocast"], "phasegraphs": ["--phase-graphs"], "profiled": [],
         "traced": [], "tracednoev": []}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=2.5)
    ap.add_argument("--chokepoint", metavar="BIN", help="chokepoint binary (for the traced variant)")
    ap.add_argument("--profile-steps", action="append", default=[], metavar="PAIR=N")
    ap.add_argument("specs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    psteps = dict(x.split("=") for x in a.profile_steps)
    plan = []
    for spec in a.specs:
        name, rest = spec.split(":")
        secs = a.seconds
        if "@" in rest:
            rest, s = rest.split("@")
            secs = float(s)
        plan.append((name, rest.split(","), secs))
    for r in range(a.rounds):
        for name, variants, secs in plan:
            for v in variants:
                res = os.path.join(a.out, f"{name}.{v}.r{r}.json")
                cmd = [sys.executable, os.path.join(HERE, name + ".py"), "--seconds", str(secs), "--result", res]
                cmd += FLAGS[v]
                if v == "profiled":
                    cmd += ["--profile", os.path.join(a.out, f"{name}.profiled.r{r}.json.gz")]
                    if name in psteps:
                        cmd += ["--profile-steps", psteps[name]]
                env = None
                if v == "tracednoev":  # the tracer without CUDA_EVENT records: what they cost
                    env = dict(os.environ, CHOKEPOINT_TRACE_EVENTS="0")
                if v in ("traced", "tracednoev"):
                    cmd[cmd.index("--seconds") + 1] = str(max(1.0, secs / 3))
                    rec = os.path.join(a.out, f"{name}.{v}.r{r}.rec")
                    cmd = [a.chokepoint, "run", "--trace", "--view", "none", "-o", rec, "--report", rec + ".json",
                           "-f", "json", "--"] + cmd
                t0 = time.time()
                p = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, env=env)
                line = [l for l in p.stdout.splitlines() if "ms/iter" in l and "iterations" in l]
                print(f"r{r} {name} {v}: exit {p.returncode} {time.time() - t0:.1f}s {line[-1] if line else p.stderr[-300:]}",
                      flush=True)
    summary = {}
    for name, variants, _ in plan:
        s = summary.setdefault(name, {})
        for v in variants:
            runs = []
            for r in range(a.rounds):
                path = os.path.join(a.out, f"{name}.{v}.r{r}.json")
                if os.path.exists(path):
                    runs.append(json.load(open(path)))
            if not runs:
                continue
            s[v] = {"samples_per_s_median_of_rounds": statistics.median(x["samples_per_s"] for x in runs),
                    "samples_per_s_mean_of_rounds": statistics.median(x["samples_per_s_mean"] for x in runs),
                    "median_ms": [x["median_ms"] for x in runs], "mean_ms": [x["mean_ms"] for x in runs]}
        base = "broken" if "broken" in s else "profiled"  # a profiled run times the broken variant first
        for v in variants:
            if v in ("broken", "profiled", "traced", "tracednoev") or v not in s or base not in s:
                continue
            s[f"speedup_{v}"] = s[v]["samples_per_s_median_of_rounds"] / s[base]["samples_per_s_median_of_rounds"]
            s[f"speedup_{v}_mean"] = s[v]["samples_per_s_mean_of_rounds"] / s[base]["samples_per_s_mean_of_rounds"]
            print(f"{name} {v}: {s[f'speedup_{v}']:.3f}x (mean-based {s[f'speedup_{v}_mean']:.3f}x)", flush=True)
    with open(os.path.join(a.out, "remeasured.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
