#!/usr/bin/env python3
"""A small DDP job for `chokepoint run` validation on several GPUs.

Usage (on a machine with 2+ GPUs, from the repository root):
    chokepoint run -- python3 -m torch.distributed.run --nproc-per-node 2 \
        tests/data/workloads/ddp_run.py --seconds 15

Each rank trains an MLP in bf16 under DistributedDataParallel (gradients all-reduced
over NCCL) for --seconds, then prints its step count. chokepoint should find one
torchrun_rank per GPU, match each GPU to its rank's PID and judge both GPUs.
"""
import argparse
import contextlib
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--nvtx", action="store_true", help='mark each step with an NVTX range "step N"')
    a = ap.parse_args()
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4096, 4096), nn.GELU()) for _ in range(8)]).to(dev)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-4, fused=True)
    x = torch.randn(4096, 4096, device=dev)
    steps = 0
    times = []
    end = time.time() + a.seconds
    t0 = time.perf_counter()
    while time.time() < end:
        rng = torch.cuda.nvtx.range(f"step {steps + 1}") if a.nvtx else contextlib.nullcontext()
        with rng:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                ddp(x).float().square().mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        steps += 1
        if steps % 10 == 0:
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            times.append((t1 - t0) * 1e3 / 10)
            t0 = t1
    torch.cuda.synchronize()
    med = f", median {statistics.median(times):.2f} ms/step" if times else ""
    print(f"rank {rank}: {steps} steps{med}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
