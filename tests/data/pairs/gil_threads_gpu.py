#!/usr/bin/env python3
"""Training a small MLP while three Python threads post-process metrics (a pattern of
home-grown logging/telemetry threads): each thread runs pure-Python loops, so all four
threads take turns holding the GIL and the training loop only gets a share of it.

Host-bound by GIL contention. Fix (--fix): move the post-processing to a
multiprocessing.Pool worker process (no GIL shared with the training loop).

--rival-duty D: each metrics thread runs Python a share D of every 20 ms and sleeps the
rest (default 1: always), a milder contention than three threads that never rest.
"""
import multiprocessing as mp
import threading
import time

import torch
import torch.nn as nn

import harness as H


def crunch(n):
    s = 0
    for i in range(n):
        s += (i * i) % 7
    return s


if __name__ == "__main__":
    args = H.parse(__doc__, lambda ap: ap.add_argument(
        "--rival-duty", type=float, default=1.0, help="share of each 20 ms a metrics thread runs Python (default 1)"))
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(512, 512), nn.GELU()) for _ in range(8)]).to(H.DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=H.CUDA)
    x = torch.randn(256, 512, device=H.DEV)
    stop = threading.Event()
    if args.fix:
        pool = mp.get_context("spawn").Pool(3)
        for _ in range(3):
            pool.apply_async(crunch, (10**9,))
    else:
        def metrics_thread():
            while not stop.is_set():
                if args.rival_duty >= 1:
                    crunch(20000)
                    continue
                busy_until = time.perf_counter() + 0.02 * args.rival_duty
                while time.perf_counter() < busy_until:
                    crunch(500)
                time.sleep(0.02 * (1 - args.rival_duty))
        threads = [threading.Thread(target=metrics_thread, daemon=True) for _ in range(3)]
        for t in threads:
            t.start()

    def step():
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    H.run(step, args, "gil_threads_gpu", samples_per_step=256)
    stop.set()
    if args.fix:
        pool.terminate()
