"""What the validation pairs share: their options, the timed loop and the profiled steps.

Each pair is a training (or serving) script in the style of a public one, with a known
bottleneck, and `--fix` applies the one change that removes it. The script builds its
model, data and optimizer, defines `step()` (one iteration) and hands it to `run()`, which

  1. runs `--warmup` iterations (compilation, cuDNN autotuning, allocator, workers),
  2. times iterations for `--seconds` in blocks of about 100 ms with one synchronize per
     block (never per iteration: a per-step sync would change what is measured), printing
     `iter N: X ms/iter` like nanoGPT does, and the median over blocks at the end,
  3. with `--profile TRACE`, records 4 more iterations (`--profile-steps N`: N) with torch.profiler (CPU + CUDA,
     record_shapes=True; schedule wait=1, warmup=2, active=4) into TRACE,
  4. with `--result JSON`, writes the figures (median ms/iter, samples/s, iterations).

The timed iterations come before the profiled ones: a finished profiler session leaves
CUPTI hooks that slow launches down. On a machine without a GPU everything runs on the
CPU at small sizes (`SMALL`): that only checks that the scripts run.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")
SMALL = not CUDA  # smoke test on a machine without a GPU


def size(gpu, cpu):
    """The size to use: `gpu` on the GPU machine, `cpu` in a CPU smoke test."""
    return cpu if SMALL else gpu


def sync():
    if CUDA:
        torch.cuda.synchronize()


def autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True):
    return torch.autocast(DEV.type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def capture_whole_step(step_on_static, opt, warmup=3):
    """Captures one whole training step (forward, loss, backward, optimizer step) in a
    torch.cuda.CUDAGraph, the recipe of PyTorch's CUDA Graphs notes ("whole network
    capture"): warm up on a side stream, set the gradients to None, then capture, so that
    backward allocates them in the graph's pool and every replay writes them in place.
    `step_on_static()` runs the step on the caller's static input tensors; the optimizer
    must be capturable (or fused/foreach with capturable=True). Returns the graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            opt.zero_grad(set_to_none=True)
            step_on_static()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        step_on_static()
    return graph


def parse(description, extra=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--fix", action="store_true", help="apply the fix")
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds of timed iterations (default 4)")
    ap.add_argument("--warmup", type=int, default=8, help="untimed iterations first (default 8)")
    ap.add_argument("--profile", metavar="TRACE", help="then profile 4 iterations into TRACE (.json.gz)")
    ap.add_argument("--profile-steps", type=int, default=4, metavar="N",
                    help="iterations to profile (default 4; more for a job whose steps vary, e.g. bursty loaders)")
    ap.add_argument("--result", metavar="JSON", help="write the measured figures to JSON")
    if extra:
        extra(ap)
    return ap.parse_args()


def run(step, args, name, samples_per_step=1, after_warmup=None):
    """Times `step` as the module docstring says; returns the median ms per iteration."""
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        step()
    sync()
    if after_warmup:
        after_warmup()
    warm_s = time.perf_counter() - t0
    t = time.perf_counter()
    step()
    sync()
    one = time.perf_counter() - t
    per_block = max(1, min(100, int(0.1 / max(one, 1e-6))))
    blocks, n = [], 0
    timed_start = time.perf_counter()
    end = timed_start + args.seconds
    while time.perf_counter() < end or len(blocks) < 5:
        t = time.perf_counter()
        for _ in range(per_block):
            step()
        sync()
        ms = (time.perf_counter() - t) * 1e3 / per_block
        blocks.append(ms)
        n += per_block
        if len(blocks) % 10 == 0:
            print(f"iter {n}: {ms:.2f} ms/iter", flush=True)
    timed_s = time.perf_counter() - timed_start
    med = statistics.median(blocks)
    mean = timed_s * 1e3 / n  # bursty input pipelines: the mean is the throughput
    q = statistics.quantiles(blocks, n=10) if len(blocks) >= 2 else [med] * 9
    res = {"name": name, "fix": bool(args.fix), "median_ms": med, "mean_ms": mean, "p10_ms": q[0], "p90_ms": q[-1],
           "block_ms": blocks,
           "iterations": n, "blocks": len(blocks), "iters_per_block": per_block,
           "samples_per_step": samples_per_step, "samples_per_s": samples_per_step * 1e3 / med,
           "samples_per_s_mean": samples_per_step * 1e3 / mean,
           "warmup_s": warm_s, "torch": torch.__version__,
           "device": torch.cuda.get_device_name(0) if CUDA else "cpu"}
    print(f"{name}{' (fixed)' if args.fix else ''}: {n} iterations, median {med:.3f} ms/iter, mean {mean:.3f} "
          f"(p10 {q[0]:.3f}, p90 {q[-1]:.3f}), {res['samples_per_s']:.1f} samples/s", flush=True)

    if args.profile:
        os.makedirs(os.path.dirname(os.path.abspath(args.profile)), exist_ok=True)
        acts = [torch.profiler.ProfilerActivity.CPU]
        if CUDA:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        walls = []
        active = max(1, args.profile_steps)
        sched = torch.profiler.schedule(wait=1, warmup=2, active=active, repeat=1)
        with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                    on_trace_ready=lambda p: p.export_chrome_trace(args.profile)) as prof:
            for _ in range(3 + active):
                t = time.perf_counter()
                step()
                prof.step()
                walls.append((time.perf_counter() - t) * 1e3)
        sync()
        res["profiled_wall_ms"] = walls[3:]
    if args.result:
        os.makedirs(os.path.dirname(os.path.abspath(args.result)), exist_ok=True)
        with open(args.result, "w") as f:
            json.dump(res, f, indent=1)
    sys.stdout.flush()
    return med
