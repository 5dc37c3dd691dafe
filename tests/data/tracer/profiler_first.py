#!/usr/bin/env python3
"""torch.profiler started before CUDA initializes: Kineto takes CUPTI first, so the
tracer of `run --trace` must say so in one line and the run must go on.
Usage: profiler_first.py TRACE.json"""
import sys

import torch

acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
with torch.profiler.profile(activities=acts) as prof:
    x = torch.randn(2048, 2048, device="cuda")
    for _ in range(50):
        x = torch.tanh(x @ x)
    torch.cuda.synchronize()
prof.export_chrome_trace(sys.argv[1])
print("profiler_first: done", flush=True)
