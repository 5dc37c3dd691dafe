#!/usr/bin/env python3
"""Small PyTorch workloads with one known bottleneck each, and their fixed variants.

They are chokepoint's ground truth: `record.py` runs each one under torch.profiler to make
the golden-test fixtures in tests/data/kineto/, and times the broken and the fixed variant
without the profiler, so the speedup that chokepoint estimates can be compared with the
speedup that the fix really gives.

Each workload is a function `make(fixed: bool, device) -> step` where `step()` runs one
iteration (a training or inference step) and returns nothing. Nothing here synchronizes
the device unless the bottleneck under study is that synchronization.
"""
import math
import numpy as np
import torch
import torch.nn as nn

WORKLOADS = {}


def workload(expect):
    """Registers a workload; `expect` is the verdict chokepoint should give (category)."""
    def wrap(fn):
        WORKLOADS[fn.__name__] = (fn, expect)
        return fn
    return wrap


def _mlp(width, depth, act=nn.ReLU):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), act()]
    return nn.Sequential(*layers)


# --- input-bound: CPU preprocessing in the main process starves the GPU -----------------
class _SlowDataset(torch.utils.data.Dataset):
    """Each sample costs ~0.5 ms of CPU (decode + augment stand-in)."""

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        x = rng.standard_normal((3, 96, 96), dtype=np.float32)
        for _ in range(4):
            x = np.tanh(x) * np.float32(1.01)
        return torch.from_numpy(x), i % 10


@workload("input")
def input_bound(fixed, dev):
    torch.backends.cudnn.benchmark = True
    ds = _SlowDataset()
    if fixed:
        dl = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=12,
                                         pin_memory=True, persistent_workers=True,
                                         prefetch_factor=4)
    else:
        dl = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=0,
                                         pin_memory=True)
    it = iter(dl)
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)
    lossf = nn.CrossEntropyLoss()

    def step():
        x, y = next(it)
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


# --- launch-bound: hundreds of tiny kernels per step -------------------------------------
@workload("host")
def launch_bound(fixed, dev):
    model = _mlp(64, 60, nn.GELU).to(dev).eval()
    x = torch.randn(8, 64, device=dev)
    if not fixed:
        def step():
            with torch.no_grad():
                model(x)
        return step
    # Fix: capture the whole forward pass in a CUDA Graph and replay it.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        model(x)

    def step():
        g.replay()
    return step


# --- .item() after every layer, then Python bookkeeping on the value ------------------
# Each .item() drains the GPU's queue, so the host's bookkeeping and the next launches run
# while the GPU idles. When that host work is shorter than the GPU work it could overlap
# (sync_bound) the syncs are the bottleneck. When it is longer (sync_host_bound) the host
# is the bottleneck either way: removing the syncs barely helps, and chokepoint must say
# "host", not "sync".
def _per_layer_item(fixed, dev, history_len):
    layers = [nn.Linear(4096, 4096).to(dev) for _ in range(8)]
    x = torch.randn(4096, 4096, device=dev)
    history = list(np.random.default_rng(0).standard_normal(history_len))
    pending = []

    def host_bookkeeping(v):
        history.append(v)
        np.percentile(np.asarray(history[-history_len:]), [50, 90, 99])

    def step():
        h = x
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for layer in layers:
                h = torch.relu(layer(h))
                if fixed:
                    # Keep the statistic on the device; read last step's values instead.
                    pending.append(h.float().norm())
                    host_bookkeeping(1.0)
                else:
                    host_bookkeeping(h.float().norm().item())
        if fixed and len(pending) > 64:
            del pending[:-8]
    return step


@workload("sync")
def sync_bound(fixed, dev):
    # Big bf16 GEMMs launched with little host work before each .item() (so the host
    # waits on the GPU), then ~1 ms of bookkeeping the GPU could have overlapped.
    layers = [nn.Linear(4096, 4096, dtype=torch.bfloat16, device=dev) for _ in range(8)]
    x = torch.randn(16384, 4096, device=dev, dtype=torch.bfloat16)
    history = list(np.random.default_rng(0).standard_normal(8500))
    pending = []

    def step():
        h = x
        with torch.no_grad():
            for layer in layers:
                h = torch.relu(layer(h))
                peak = h.amax()
                if fixed:
                    pending.append(peak)  # read it later, without blocking now
                    v = 1.0
                else:
                    v = peak.item()
                history.append(v)
                np.percentile(np.asarray(history[-8500:]), [50, 90, 99])
        if fixed and len(pending) > 64:
            del pending[:-8]
    return step


@workload("host")
def sync_host_bound(fixed, dev):
    return _per_layer_item(fixed, dev, 20000)


# --- transfer-bound: a big pageable host tensor copied to the GPU every step -------------
@workload("transfer")
def pageable_copy(fixed, dev):
    host = torch.randn(64 << 20)  # 256 MiB of float32, pageable
    if fixed:
        host = host.pin_memory()
    w = torch.randn(2048, 2048, device=dev)

    def step():
        d = host.to(dev, non_blocking=fixed)
        (d.view(-1, 2048)[:8192] @ w).sum()
    return step


# --- compute-bound without tensor cores: FP32 GEMMs with TF32 disabled -------------------
@workload("compute")
def fp32_gemm(fixed, dev):
    torch.backends.cuda.matmul.allow_tf32 = bool(fixed)
    model = _mlp(4096, 4).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(8192, 4096, device=dev)

    def step():
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


# --- memory-bound: a chain of unfused elementwise ops on a large tensor ------------------
def _chain(x):
    y = x * 1.5 + 0.25
    y = torch.sigmoid(y) * y
    y = torch.tanh(y) + x
    y = y * y - 0.5
    y = torch.nn.functional.gelu(y)
    return y.clamp(-3.0, 3.0)


@workload("memory")
def elementwise_chain(fixed, dev):
    x = torch.randn(128 << 20, device=dev)  # 512 MiB
    fn = torch.compile(_chain) if fixed else _chain

    def step():
        fn(x)
    return step


# --- healthy: bf16 transformer layer training, data already on the GPU -------------------
@workload("compute")
def healthy_bf16(fixed, dev):
    layer = nn.TransformerEncoderLayer(2048, 16, 8192, batch_first=True, norm_first=True,
                                       dropout=0.0).to(dev)
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4, fused=True)
    x = torch.randn(8, 2048, 2048, device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            layer(x).float().square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


# --- allocator churn: empty_cache every step with varying shapes -------------------------
# Its FP32 GEMMs (TF32 is off by default) dominate the step, so the verdict is compute;
# the allocator finding comes second, and its fix (no empty_cache) is what is timed.
@workload("compute")
def allocator_churn(fixed, dev):
    model = _mlp(1024, 6).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, foreach=True)
    rng = np.random.default_rng(0)

    def step():
        n = int(rng.integers(512, 4096)) * 8   # variable batch, as with variable sequences
        x = torch.randn(n, 1024, device=dev)
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        if not fixed:
            torch.cuda.empty_cache()
    return step


# --- low occupancy: a custom kernel launched with far fewer blocks than SMs --------------
@workload("compute")
def small_grid(fixed, dev):
    import triton
    import triton.language as tl

    @triton.jit
    def scale_rows_kernel(x_ptr, y_ptr, n, per_prog, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        start = pid * per_prog
        for off in range(start, start + per_prog, BLOCK):
            idx = off + tl.arange(0, BLOCK)
            m = idx < n
            v = tl.load(x_ptr + idx, mask=m)
            tl.store(y_ptr + idx, v * 2.0 + 1.0, mask=m)

    n = 64 << 20
    x = torch.randn(n, device=dev)
    y = torch.empty_like(x)
    progs = 16 if not fixed else 132 * 8
    per = math.ceil(n / progs / 1024) * 1024

    def step():
        scale_rows_kernel[(progs,)](x, y, n, per, BLOCK=1024)
    return step
