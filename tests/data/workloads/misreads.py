#!/usr/bin/env python3
"""Programs shaped like the ones `run`'s verdict misread (issue 42), each with its real fix.

Usage (on the GPU machine, from the repository root):
    chokepoint run -- python3 tests/data/workloads/misreads.py gil_join --seconds 12
    python3 tests/data/workloads/misreads.py gil_join --fixed --seconds 8 --result fixed.json

Each program runs its broken variant (or the fix with --fixed) for --seconds, then prints
and writes (--result) its median step time, so the verdict and the estimate of a recording
can be set against the fix timed in the same session. The programs and their truth:

  gil_join       4 Python threads, each doing ~1 ms of Python and one small GPU op per step;
                 the main thread waits on a line `t.join(); torch.cuda.synchronize()`.
                 Truth: GIL contention (fix: the 4 workers as processes), not a sync.
  pageable_item  each step copies a 64 MB pageable host tensor to the GPU, multiplies, and
                 reads a scalar back with .cpu(). Truth: a pageable copy (fix: pinned source,
                 non_blocking), not the scalar read.
  gpt_memmap     a small eager GPT whose batches are cut from a numpy memmap in the loop
                 (no DataLoader), AdamW. Truth: launch overhead (fix: torch.compile with
                 mode="reduce-overhead"), not the loader.
  oversub        2 x CPUs processes burn CPU for the first 10 s while the job imports torch
                 and starts its GPU loop. Truth: CPU oversubscription (fix: no burners); a
                 step here is the whole job (`--steps` matmuls), timed from the start.
  fp32_layer     an fp32 transformer encoder layer training with TF32 off. Truth: no tensor
                 cores (fix: bf16 autocast). MISREADS_TF32=1 turns TF32 on instead.
"""
import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time

T0 = time.time()


def py_work(n):
    """About n x 50 ns of pure Python (holds the GIL)."""
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


# --- gil_join ----------------------------------------------------------------------------
def _gil_worker(seconds, counts, k, barrier):
    import torch
    x = torch.randn(256, 256, device="cuda")
    barrier.wait()
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        py_work(20000)
        x = torch.tanh(x @ x)
        n += 1
    torch.cuda.synchronize()
    counts[k] = n


def gil_join(fixed, seconds):
    import torch
    torch.zeros(1, device="cuda")
    if fixed:
        ctx = mp.get_context("spawn")
        counts = ctx.Array("i", 4)
        barrier = ctx.Barrier(5)
        procs = [ctx.Process(target=_gil_worker, args=(seconds, counts, k, barrier)) for k in range(4)]
        for p in procs:
            p.start()
        barrier.wait()  # each worker has its CUDA context: time the steps only
        t0 = time.time()
        for p in procs:
            p.join()
        wall = time.time() - t0
        total = sum(counts[:])
    else:
        counts = [0] * 4
        barrier = threading.Barrier(5)
        threads = [threading.Thread(target=_gil_worker, args=(seconds, counts, k, barrier)) for k in range(4)]
        for t in threads:
            t.start()
        barrier.wait()
        t0 = time.time()
        for t in threads: t.join(); torch.cuda.synchronize()  # noqa: E702 (the misread line)
        wall = time.time() - t0
        total = sum(counts)
    # A step is one worker iteration; 4 run at once, so the job's time per step:
    return [wall * 1e3 / max(total, 1)], total


# --- per-step programs ---------------------------------------------------------------------
def pageable_item(fixed, dev):
    import torch
    host = torch.randn(4096, 4096)
    if fixed:
        host = host.pin_memory()
    w = torch.randn(4096, 4096, device=dev) / 64
    out = []

    def step():
        xg = host.to(dev, non_blocking=fixed)
        y = xg @ w
        out.append(y[0, 0].cpu())
        if len(out) > 100:
            out.clear()
    return step


def _gpt(dev, vocab=96, n_layer=6, n_embd=256, n_head=8, block=128):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.qkv = nn.Linear(n_embd, 3 * n_embd)
            self.proj = nn.Linear(n_embd, n_embd)
            self.fc, self.fc2 = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(n_embd, dim=2)
            q, k, v = (z.view(b, t, n_head, c // n_head).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.fc2(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.blocks = nn.ModuleList(Block() for _ in range(n_layer))
            self.ln, self.head = nn.LayerNorm(n_embd), nn.Linear(n_embd, vocab, bias=False)

        def forward(self, idx, targets):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for b in self.blocks:
                x = b(x)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT().to(dev), block


def gpt_memmap(fixed, dev):
    import numpy as np
    import torch
    path = os.path.join(tempfile.gettempdir(), "misreads_tokens.bin")
    if not os.path.exists(path):
        np.random.default_rng(0).integers(0, 96, 4 << 20, dtype=np.uint16).tofile(path)
    data = np.memmap(path, dtype=np.uint16, mode="r")
    model, block = _gpt(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    fwd = torch.compile(model, mode="reduce-overhead") if fixed else model
    batch = 16

    def get_batch():
        ix = torch.randint(len(data) - block - 1, (batch,))
        x = torch.stack([torch.from_numpy(data[i:i + block].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block].astype(np.int64)) for i in ix])
        return x.pin_memory().to(dev, non_blocking=True), y.pin_memory().to(dev, non_blocking=True)

    def step():
        x, y = get_batch()
        loss = fwd(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def fp32_layer(fixed, dev):
    import torch
    import torch.nn as nn
    tf32 = os.environ.get("MISREADS_TF32") == "1"  # the middle variant, for GPM's tensor activity
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    layer = nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True, dropout=0.0).to(dev)
    opt = torch.optim.SGD(layer.parameters(), lr=1e-3)
    x = torch.randn(16, 512, 1024, device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=fixed):
            loss = layer(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


STEPPED = {"pageable_item": pageable_item, "gpt_memmap": gpt_memmap, "fp32_layer": fp32_layer}


def run_steps(name, fixed, seconds):
    import torch
    dev = torch.device("cuda")
    step = STEPPED[name](fixed, dev)
    warm = 30 if name == "gpt_memmap" else 5  # compile and graph capture in the first steps
    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    times, n, end = [], 0, time.time() + seconds
    while time.time() < end:
        t0 = time.perf_counter()
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        n += 5
        times.append((time.perf_counter() - t0) * 1e3 / 5)
    return times, n


# --- oversub -------------------------------------------------------------------------------
def _burn(until):
    while time.time() < until:
        py_work(100000)


def oversub(fixed, steps):
    burners = []
    if not fixed:
        until = T0 + 10
        for _ in range(2 * (os.cpu_count() or 1)):
            p = mp.get_context("fork").Process(target=_burn, args=(until,))
            p.start()
            burners.append(p)
    import torch
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(steps):
        a = (a @ a).tanh()
    torch.cuda.synchronize()
    wall = time.time() - T0
    for p in burners:
        p.join()
    return [wall * 1e3], steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("program", choices=["gil_join", "oversub", *STEPPED])
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--seconds", type=float, default=12)
    ap.add_argument("--steps", type=int, default=2000, help="oversub: matmuls in the job")
    ap.add_argument("--result", help="write {median_ms, steps, ...} here")
    a = ap.parse_args()
    if a.program == "gil_join":
        times, n = gil_join(a.fixed, a.seconds)
    elif a.program == "oversub":
        times, n = oversub(a.fixed, a.steps)
    else:
        times, n = run_steps(a.program, a.fixed, a.seconds)
    med = statistics.median(times)
    res = {"program": a.program, "fixed": a.fixed, "median_ms": med, "steps": n, "wall_s": time.time() - T0}
    print(json.dumps(res), flush=True)
    if a.result:
        with open(a.result, "w") as f:
            json.dump(res, f)


if __name__ == "__main__":
    sys.exit(main())
