#!/usr/bin/env python3
"""A 2-rank DDP job on ONE GPU over gloo, with an optional planted straggler, profiled.

Two processes share cuda:0 (NCCL refuses two ranks on one GPU; gloo all-reduces CUDA
tensors through the host). Each rank trains a bf16 MLP under DistributedDataParallel;
with --sleep-ms S, rank 1 sleeps S ms at the start of every step (a planted straggler:
host time outside any op, which the other rank waits for in the gradient all-reduce).

Per rank it writes OUT/rank<R>.json.gz (torch.profiler, 8 active steps, record_shapes)
and prints one line `steps_ms rank=R median=M` with the median of 20 unprofiled steps
(synchronized, timed on the host) measured after the profiled ones.

Run on the H200 (from the repository root) by tests/data/distributed/gpu_gloo.sh:
    python3 -m torch.distributed.run --nproc-per-node 2 gloo_ddp.py --out DIR --sleep-ms 20
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--sleep-ms", type=float, default=0)
    ap.add_argument("--plain-steps", type=int, default=20)
    a = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(1024, 1024), nn.GELU()) for _ in range(4)]).to(dev)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[0])
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-4, fused=True)
    x = torch.randn(8192, 1024, device=dev)

    def step():
        if rank == 1 and a.sleep_ms > 0:
            time.sleep(a.sleep_ms / 1000.0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            ddp(x).float().square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"rank{rank}.json.gz")
    sched = torch.profiler.schedule(wait=1, warmup=2, active=8)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(11):
            step()
            prof.step()
    torch.cuda.synchronize()
    dist.barrier()
    times = []
    for _ in range(a.plain_steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"steps_ms rank={rank} sleep_ms={a.sleep_ms:g} median={statistics.median(times):.3f} "
          f"all={','.join(f'{t:.2f}' for t in times)}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
