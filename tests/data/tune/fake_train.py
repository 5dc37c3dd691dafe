#!/usr/bin/env python3
"""A fake training job for the tests of `chokepoint tune` (no GPU, no torch).

Its throughput is a deterministic model with a planted optimum, printed as
'samples/s: X' lines (one every --interval seconds, --iters of them, 0: until killed):
  GPU rate     G = 3000 * (2 if amp == bf16 else 1) * B / (B + 64)
  loader rate  L = 200 if W == 0 else 600 * min(W, 10) - 150 * max(0, W - 10)
  throughput   T = min(G, L) * (1 - 0.02 * |W - 10|)
so the best is amp=bf16, workers=10 and the largest batch that fits. Memory: B * (1 if
bf16 else 2) * 10 MiB, printed as 'peak_mem_mb: M'; above 5120 MiB it fails like PyTorch
(exit 1, 'torch.OutOfMemoryError: CUDA out of memory' on stderr): bf16 fits up to 512,
off up to 256. --hang: prints nothing and sleeps, with a child process of its own
(written to --pid-file) to show that a timeout kills the whole group. --silent: prints
nothing and exits 0. --slow-exit S: S seconds between the out-of-memory error and the exit
(PyTorch joining its DataLoader workers).
"""
import argparse
import os
import subprocess
import sys
import time


def throughput(b, w, amp):
    g = 3000.0 * (2 if amp == "bf16" else 1) * b / (b + 64)
    loader = 200.0 if w == 0 else 600.0 * min(w, 10) - 150.0 * max(0, w - 10)
    return min(g, loader) * (1 - 0.02 * abs(w - 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--amp", default="off")
    ap.add_argument("--iters", type=int, default=0)
    ap.add_argument("--interval", type=float, default=0.02)
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--silent", action="store_true")
    ap.add_argument("--pid-file", default="")
    ap.add_argument("--slow-exit", type=float, default=0, help="seconds between the OOM error and the exit")
    a = ap.parse_args()
    if a.hang:
        child = subprocess.Popen(["sleep", "1000"])
        if a.pid_file:
            with open(a.pid_file, "w") as f:
                f.write(f"{os.getpid()} {child.pid}\n")
        time.sleep(1000)
        return 0
    if a.silent:
        return 0
    mem = a.batch_size * (1 if a.amp == "bf16" else 2) * 10
    if mem > 5120:
        print("Traceback (most recent call last):\n  ...", file=sys.stderr)
        print(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {mem} MiB", file=sys.stderr, flush=True)
        if a.slow_exit:
            time.sleep(a.slow_exit)
        return 1
    print(f"peak_mem_mb: {mem}", flush=True)
    t = throughput(a.batch_size, a.workers, a.amp)
    i = 0
    while a.iters == 0 or i < a.iters:
        time.sleep(a.interval)
        print(f"step {i} samples/s: {t:.1f}", flush=True)
        i += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
