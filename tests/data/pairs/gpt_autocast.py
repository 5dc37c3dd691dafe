#!/usr/bin/env python3
"""Training a small GPT (nanoGPT's model.py, shrunk) in FP32.

Compute-bound on FP32 GEMMs without tensor cores: PyTorch's default matmul precision is
"highest", so FP32 matmuls run on the SIMT units. Fix (--fix): bf16 autocast around the
forward pass and the loss, as nanoGPT's train.py does (`ctx = torch.amp.autocast(...)`). Second fix (--tf32):
stay in FP32 with torch.set_float32_matmul_precision("high") (TF32 tensor cores), which
chokepoint lists next to autocast.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import harness as H

def options(ap):
    ap.add_argument("--tf32", action="store_true", help="TF32 matmuls instead of the fix")


args = H.parse(__doc__, options)
if args.tf32:
    torch.set_float32_matmul_precision("high")
torch.manual_seed(0)
N_LAYER, N_HEAD, D = 6, 8, H.size(768, 64)
T, B = H.size(256, 16), H.size(16, 2)
VOCAB = H.size(8192, 256)


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(D, 3 * D)
        self.c_proj = nn.Linear(D, D)

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(D, dim=2)
        q = q.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        k = k.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        v = v.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn = CausalSelfAttention()
        self.c_fc, self.c_proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(T, D)
        self.h = nn.ModuleList(Block() for _ in range(N_LAYER))
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * N_LAYER))

    def forward(self, idx, targets):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


model = GPT().to(H.DEV)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), fused=H.CUDA)
data = torch.randint(VOCAB, (1 << 20,), device=H.DEV)  # the token stream, already on the GPU


def get_batch():
    ix = torch.randint(len(data) - T - 1, (B,), device=H.DEV)
    x = data[ix[:, None] + torch.arange(T, device=H.DEV)]
    y = data[ix[:, None] + 1 + torch.arange(T, device=H.DEV)]
    return x, y


def step():
    x, y = get_batch()
    with H.autocast(enabled=args.fix):
        loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


H.run(step, args, "gpt_autocast", samples_per_step=B)
