#!/usr/bin/env python3
"""What recording costs the host, per event: a step of 300 tiny CUDA ops (one ATen op and
one kernel launch each), timed plain, under torch.profiler (with and without
record_shapes) and, run under `chokepoint run --trace`, under the CUPTI tracer.

Each mode times 30 steps with a synchronize after each (the same in every mode, so the
difference is the recording's cost), prints `MODE: X ms/step`, and for the profiled
modes counts the cpu_op and cuda_runtime events of one step in the exported trace, so
the cost per ATen op and per CUDA call can be read off:
    python3 overhead.py --mode plain|shapes|noshapes [--trace OUT.json]
"""
import argparse
import gzip
import json
import statistics
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--mode", default="plain", choices=["plain", "shapes", "noshapes"])
ap.add_argument("--trace", default="/tmp/overhead_trace.json")
ap.add_argument("--ops", type=int, default=300)
a = ap.parse_args()
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.randn(256, device=dev)
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)


def step():
    y = x
    for _ in range(a.ops):
        y = y.add(1.0)
    return y


for _ in range(20):
    step()
sync()
times = []


def timed(n, after=None):
    for _ in range(n):
        t = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
        if after:
            after()


if a.mode == "plain":
    timed(60)
else:
    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    with torch.profiler.profile(activities=acts, record_shapes=(a.mode == "shapes"),
                                schedule=torch.profiler.schedule(wait=0, warmup=5, active=60),
                                on_trace_ready=lambda p: p.export_chrome_trace(a.trace)) as prof:
        for _ in range(5):
            step()
            sync()
            prof.step()
        timed(60, prof.step)
med = statistics.median(times[5:])
out = {"mode": a.mode, "ops_per_step": a.ops, "ms_per_step": med}
if a.mode != "plain":
    opener = gzip.open if a.trace.endswith(".gz") else open
    with opener(a.trace, "rt") as f:
        ev = json.load(f)["traceEvents"]
    steps = sum(1 for e in ev if e.get("name", "").startswith("ProfilerStep#"))
    for cat in ("cpu_op", "cuda_runtime", "cuda_driver", "kernel"):
        out[cat + "_per_step"] = sum(1 for e in ev if e.get("cat") == cat) / max(1, steps)
print("OVERHEAD " + json.dumps(out), flush=True)
