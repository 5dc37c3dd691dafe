#!/usr/bin/env python3
"""LLM decoding with fp16 weights, one sequence at a time: each token multiplies a
[1, 8192] activation by eight [8192, 8192] weight matrices (GEMVs).

Memory-bound: every token streams 1 GiB of weights from HBM while doing 2 FLOP per
weight (the decode GEMV of issue 10, ~80% of HBM bandwidth, which must not read as
compute). Fix (--fix): decode 4 sequences together (batch 4): the same weight traffic
serves 4 tokens. Throughput in tokens/s is compared.
"""
import torch

import harness as H

args = H.parse(__doc__)
torch.manual_seed(0)
D, LAYERS = H.size(8192, 256), 8
BATCH = 4 if args.fix else 1
dtype = torch.float16 if H.CUDA else torch.float32
weights = [torch.randn(D, D, device=H.DEV, dtype=dtype) * 0.01 for _ in range(LAYERS)]
x0 = torch.randn(BATCH, D, device=H.DEV, dtype=dtype)


@torch.no_grad()
def step():
    x = x0
    for w in weights:
        x = torch.nn.functional.linear(x, w)
    return x


H.run(step, args, "gemv_batch", samples_per_step=BATCH)
