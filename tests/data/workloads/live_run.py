#!/usr/bin/env python3
"""Runs one workload of workloads.py for a while, for `chokepoint run` validation.

Usage (on the GPU machine, from the repository root):
    chokepoint run -- python3 tests/data/workloads/live_run.py input_bound --seconds 20
    python3 tests/data/workloads/live_run.py healthy_bf16 --fixed --seconds 20

It steps the workload (the broken variant unless --fixed) until --seconds have passed,
then prints the step count and the median step time, so the live verdict can be read
next to what the workload did. Two CPU-only programs need no GPU:
    gil_threads   4 Python threads spinning (they share one GIL)
    busy_process  one Python thread spinning
"""
import argparse
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_only(name, seconds):
    def spin():
        end = time.time() + seconds
        x = 0
        while time.time() < end:
            x += 1
    n = 4 if name == "gil_threads" else 1
    threads = [threading.Thread(target=spin) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"{name}: {n} thread(s) spun for {seconds} s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--profile", metavar="TRACE", help="run under torch.profiler (CPU + CUDA), export to TRACE")
    ap.add_argument("--nvtx", action="store_true", help='mark each step with an NVTX range "step N"')
    a = ap.parse_args()
    if a.workload in ("gil_threads", "busy_process"):
        cpu_only(a.workload, a.seconds)
        return
    import torch
    sys.path.insert(0, HERE)
    from workloads import WORKLOADS
    fn, expect = WORKLOADS[a.workload]
    step = fn(a.fixed, torch.device("cuda"))
    for _ in range(5):  # warm-up: allocator, cuDNN/cuBLAS heuristics
        step()
    torch.cuda.synchronize()
    prof = None
    if a.profile:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        prof = torch.profiler.profile(activities=acts)
        prof.__enter__()
    times = []
    end = time.time() + a.seconds
    n = 0
    while time.time() < end:
        t0 = time.perf_counter()
        for _ in range(5):
            n += 1
            if a.nvtx:
                with torch.cuda.nvtx.range(f"step {n}"):
                    step()
            else:
                step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3 / 5)
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(a.profile)
    print(f"{a.workload}{' (fixed)' if a.fixed else ''}: {5 * len(times)} steps, "
          f"median {statistics.median(times):.2f} ms/step; expected verdict {expect}", flush=True)


if __name__ == "__main__":
    main()
