#!/usr/bin/env python3
"""Two processes that each initialize CUDA and run a few matmuls (the DDP case of
`run --trace`: one trace file per process). Usage: two_procs.py"""
import torch
import torch.multiprocessing as mp


def work(rank):
    x = torch.randn(1024, 1024, device="cuda")
    for _ in range(20):
        x = torch.tanh(x @ x)
    torch.cuda.synchronize()
    print(f"rank {rank}: done", flush=True)


if __name__ == "__main__":
    mp.set_start_method("spawn")
    ps = [mp.Process(target=work, args=(r,)) for r in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    print("two_procs: exit codes", [p.exitcode for p in ps], flush=True)
