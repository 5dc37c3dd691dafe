#!/usr/bin/env python3
"""Records the golden-test fixtures: one torch.profiler trace per workload, plus timings.

Usage (on the GPU machine, from the repository root):
    python3 tests/data/workloads/record.py --out DIR            # every workload
    python3 tests/data/workloads/record.py --out DIR sync_bound  # some of them

For each workload it writes DIR/<name>.json.gz (the Kineto trace of 3 profiled steps after
1 wait and 2 warm-up steps, record_shapes=True) and adds to DIR/measured.json the median
step time of the broken and of the fixed variant measured WITHOUT the profiler, so the
speedup chokepoint estimates from the trace can be checked against the speedup the fix
really gives. Each workload runs in its own process so that global settings (TF32,
cudnn.benchmark) do not leak from one to the next.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def timed_steps(step, n, sync):
    """Median wall time of one step over n steps, in ms, synchronizing after each step."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def run_one(name, out, stack=False, fixed_only=False):
    """One workload in this process: either the broken variant (timed, then profiled) or
    the fixed variant (timed only). They run in separate processes because a finished
    profiler session leaves CUPTI hooks that slow launches down, and because a fix may
    change global settings (TF32)."""
    import torch
    sys.path.insert(0, HERE)
    from workloads import WORKLOADS
    fn, expect = WORKLOADS[name]
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    tag = name + ("_stack" if stack else "")
    res = {}
    if fixed_only:
        try:
            fixed = fn(True, dev)
            for _ in range(5):
                fixed()
            sync()
            res["step_ms_fixed"] = timed_steps(fixed, 20, sync)
        except Exception as e:  # the fixed variant is informative, the trace is what matters
            res["fixed_error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
        with open(os.path.join(out, tag + ".fixed.json"), "w") as f:
            json.dump(res, f)
        return

    res = {"expect": expect, "device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    step = fn(False, dev)
    for _ in range(5):
        step()
    sync()
    res["step_ms_broken"] = timed_steps(step, 20, sync)

    prof_steps = []
    sched = torch.profiler.schedule(wait=1, warmup=2, active=3, repeat=1)
    path = os.path.join(out, tag + ".json.gz")
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=sched, record_shapes=True, with_stack=stack, profile_memory=stack,
            on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(6):
            t0 = time.perf_counter()
            step()
            prof.step()
            prof_steps.append((time.perf_counter() - t0) * 1e3)
    sync()
    res["profiled_wall_ms"] = prof_steps[3:]
    with open(os.path.join(out, tag + ".measured.json"), "w") as f:
        json.dump(res, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--fixed-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--stack", action="store_true",
                    help="also record Python stacks and memory events (file NAME_stack.json.gz)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.one:
        run_one(a.one, a.out, a.stack, a.fixed_only)
        return
    sys.path.insert(0, HERE)
    from workloads import WORKLOADS  # noqa: imports torch once here to list names
    names = a.names or list(WORKLOADS)
    failed = []
    for n in names:
        t0 = time.time()
        base = [sys.executable, os.path.abspath(__file__), "--out", a.out, "--one", n]
        base += ["--stack"] if a.stack else []
        for extra in ([], ["--fixed-only"]):
            r = subprocess.run(base + extra)
            if r.returncode:
                failed.append(n)
        print(f"# {n}: {time.time() - t0:.1f}s", flush=True)
    merged = {}
    for n in names:
        n += "_stack" if a.stack else ""
        p = os.path.join(a.out, n + ".measured.json")
        if os.path.exists(p):
            with open(p) as f:
                merged[n] = json.load(f)
            os.remove(p)
        p = os.path.join(a.out, n + ".fixed.json")
        if os.path.exists(p) and n in merged:
            with open(p) as f:
                merged[n].update(json.load(f))
            os.remove(p)
            if "step_ms_fixed" in merged[n]:
                merged[n]["speedup_measured"] = merged[n]["step_ms_broken"] / merged[n]["step_ms_fixed"]
        if n in merged:
            print(n, json.dumps(merged[n]), flush=True)
    with open(os.path.join(a.out, "measured_stack.json" if a.stack else "measured.json"), "w") as f:
        json.dump(merged, f, indent=1, sort_keys=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
