#!/usr/bin/env python3
"""A loader-bound training job with a planted best configuration, for `chokepoint tune`
on a GPU (docs/VALIDATION.md, "tune").

  python3 loader_bound_train.py --batch-size B --workers W --amp off|bf16

A DataLoader whose every sample costs CPU_US microseconds of CPU in the worker (a busy
loop: the same on any CPU, one core per worker) feeds a small MLP trained with SGD, in
bf16 autocast or fp32; each step then keeps the GPU busy for a planted time per sample
(torch.cuda._sleep: a model whose bf16 step is twice as fast as its fp32 one) and holds a
planted activation buffer per sample, under a per-process memory cap (the caching
allocator raises torch.OutOfMemoryError above it). So:
  loader rate   W x 1e6/CPU_US samples/s (W=0: the main process alone)
  GPU rate      1e6/GPU_US[amp] samples/s: bf16 caps at ~11 workers, fp32 at ~5.5
  memory        batch x SCRATCH_MIB[amp] over the model's: fp32 at batch 1024 is out of
                memory, bf16 fits up to 1024.
The best: amp=bf16, 12 workers or more (all at the GPU cap; 8 are loader-bound at
~16000 samples/s), the largest batch; fp32 tops out at ~11000 samples/s.

Prints after a warm-up of 2 x workers + 2 steps (the prefetched batches), every >= 0.3 s
and >= 2 steps: 'step N samples/s: X peak_mem_mb: M'. Runs until killed (or --seconds).
"""
import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CPU_US = 500  # loader CPU per sample
GPU_US = {"bf16": 45.0, "off": 90.0}  # planted GPU time per sample
SCRATCH_MIB = {"bf16": 0.5, "off": 1.0}  # planted activation memory per sample
CAP_MIB = 768 + 256  # allowed above the model's own memory
CLOCK_HZ = 1.98e9  # torch.cuda._sleep counts SM clock cycles (H200 boost clock)


class Synthetic(Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        end = time.perf_counter() + CPU_US * 1e-6
        while time.perf_counter() < end:
            pass
        return torch.full((3 * 32 * 32,), float(i % 7)), i % 10


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--amp", choices=["off", "bf16"], required=True)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--nvtx", action="store_true", help="each step an NVTX range 'step N' (for traced steps)")
    a = ap.parse_args()
    # Without a GPU (a smoke test of the script and of tune's flow only): time.sleep for
    # the GPU time, the memory cap checked by hand.
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    if dev == "cpu" and a.batch_size * SCRATCH_MIB[a.amp] > CAP_MIB - 128:
        raise torch.OutOfMemoryError("CUDA out of memory (emulated without a GPU)")
    model = nn.Sequential(nn.Linear(3072, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10))
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    if dev == "cuda":
        torch.cuda.synchronize()
        total = torch.cuda.get_device_properties(0).total_memory
        cap = torch.cuda.memory_reserved() + CAP_MIB * 2**20
        torch.cuda.set_per_process_memory_fraction(cap / total)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    loader = DataLoader(Synthetic(), batch_size=a.batch_size, num_workers=a.workers, pin_memory=dev == "cuda",
                        persistent_workers=a.workers > 0)
    warm = 2 * a.workers + 2
    step, t0, n0, start = 0, None, 0, time.perf_counter()
    for x, y in loader:
        if a.nvtx:
            torch.cuda.nvtx.range_push(f"step {step}")
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        scratch = torch.empty(int(a.batch_size * SCRATCH_MIB[a.amp] * 2**20), dtype=torch.uint8, device=dev)
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=a.amp == "bf16"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if dev == "cuda":
            torch.cuda._sleep(int(a.batch_size * GPU_US[a.amp] * 1e-6 * CLOCK_HZ))
        else:
            time.sleep(a.batch_size * GPU_US[a.amp] * 1e-6)
        del scratch
        if a.nvtx:
            torch.cuda.nvtx.range_pop()
        step += 1
        if step == warm:
            sync()
            t0, n0 = time.perf_counter(), step
        elif t0 is not None and step - n0 >= 2 and time.perf_counter() - t0 >= 0.3:
            sync()
            now = time.perf_counter()
            rate = (step - n0) * a.batch_size / (now - t0)
            mem = torch.cuda.max_memory_allocated() / 2**20 if dev == "cuda" else 0
            print(f"step {step} samples/s: {rate:.1f} peak_mem_mb: {mem:.0f}", flush=True)
            t0, n0 = now, step
        if a.seconds and time.perf_counter() - start > a.seconds:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
