#!/usr/bin/env python3
"""Token-by-token decoding of a small GPT (serving), one token per iteration, batch 1.

Launch-bound: each decode step is ~14 tiny kernels per layer, each shorter than its
launch, so the GPU waits for Python and the CUDA launch path. Fix (--fix): capture the
decode step in a CUDA Graph once (static input, output and KV-cache buffers, as
gpt-fast and vLLM do) and replay it each iteration.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import harness as H

args = H.parse(__doc__)
torch.manual_seed(0)
N_LAYER, N_HEAD, D = 12, 8, H.size(512, 64)
CTX = H.size(256, 16)
VOCAB = H.size(8192, 256)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc, self.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        # Keys and values of the previous CTX tokens (a static cache, as in gpt-fast).
        self.register_buffer("k_cache", torch.randn(1, N_HEAD, CTX, D // N_HEAD))
        self.register_buffer("v_cache", torch.randn(1, N_HEAD, CTX, D // N_HEAD))

    def forward(self, x):  # x: [1, 1, D]
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q = q.view(1, 1, N_HEAD, D // N_HEAD).transpose(1, 2)
        att = (q @ self.k_cache.transpose(-2, -1)) / math.sqrt(D // N_HEAD)
        y = F.softmax(att, dim=-1) @ self.v_cache
        x = x + self.proj(y.transpose(1, 2).reshape(1, 1, D))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList(Block() for _ in range(N_LAYER))
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.wte(idx)
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


model = GPT().to(H.DEV).eval()
token = torch.zeros(1, 1, dtype=torch.long, device=H.DEV)


@torch.no_grad()
def decode_one():
    logits = model(token)
    token.copy_(logits[:, -1].argmax(-1, keepdim=True))  # greedy; stays on the GPU


step = decode_one
if args.fix and H.CUDA:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            decode_one()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        decode_one()
    step = graph.replay

H.run(step, args, "decode_graphs")
