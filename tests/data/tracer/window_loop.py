#!/usr/bin/env python3
"""A launch-bound loop with exact per-step times, for the trace-window checks
(gpu_windows.sh): the forward of a 60-layer MLP on 8 rows (launch_bound of
workloads.py, ~180 small kernels), torch.cuda.synchronize() at the end of every step, so
each step's time is its own and a synchronization marks each step.

Usage: window_loop.py STEPS OUT.json [--nvtx] [--gemm] [--profiler]
  --nvtx      each step in an NVTX range "step N"
  --gemm      a bf16 GEMM-bound step instead (8192^3 matmuls)
  --profiler  the whole loop under torch.profiler (CPU and CUDA activity), for comparison
  --profiler-cycle W:A  torch.profiler on a schedule instead: W steps waiting, 1 warm-up,
              A active, repeated; OUT.json then also lists the active steps ("active")
  --end-times also write each step's end as CLOCK_REALTIME seconds ("end_s")
Writes {"ms": [step times...]} and prints the median.
"""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn


def launch_bound(dev):
    layers = []
    for _ in range(60):
        layers += [nn.Linear(64, 64), nn.GELU()]
    model = nn.Sequential(*layers).to(dev).eval()
    x = torch.randn(8, 64, device=dev)

    def step():
        with torch.no_grad():
            model(x)
    return step


def gemm_bound(dev):
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)

    def step():
        for _ in range(4):
            a @ b
    return step


def main():
    steps, out = int(sys.argv[1]), sys.argv[2]
    nvtx, gemm = "--nvtx" in sys.argv, "--gemm" in sys.argv
    dev = torch.device("cuda")
    step = gemm_bound(dev) if gemm else launch_bound(dev)
    ms = []
    end_times = [] if "--end-times" in sys.argv else None
    prof = None
    cycle = None
    active = []
    for i, a in enumerate(sys.argv):
        if a == "--profiler-cycle":
            cycle = tuple(int(x) for x in sys.argv[i + 1].split(":"))
    if cycle:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        sched = torch.profiler.schedule(wait=cycle[0], warmup=1, active=cycle[1])
        prof = torch.profiler.profile(activities=acts, schedule=sched)
        prof.__enter__()
    elif "--profiler" in sys.argv:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        prof = torch.profiler.profile(activities=acts)
        prof.__enter__()
    for n in range(1, steps + 1):
        t0 = time.perf_counter()
        if nvtx:
            torch.cuda.nvtx.range_push(f"step {n}")
        step()
        torch.cuda.synchronize()
        if nvtx:
            torch.cuda.nvtx.range_pop()
        ms.append((time.perf_counter() - t0) * 1e3)
        if end_times is not None:
            end_times.append(time.time())
        if cycle:
            if (n - 1) % (cycle[0] + 1 + cycle[1]) >= cycle[0] + 1:
                active.append(n)
            prof.step()
    if prof is not None:
        prof.__exit__(None, None, None)
    doc = {"ms": ms, "active": active} if cycle else {"ms": ms}
    if end_times is not None:
        doc["end_s"] = end_times
    with open(out, "w") as f:
        json.dump(doc, f)
    print(f"{steps} steps, median {statistics.median(ms):.3f} ms/step", flush=True)


if __name__ == "__main__":
    main()
