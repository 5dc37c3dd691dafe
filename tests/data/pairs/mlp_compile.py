#!/usr/bin/env python3
"""Training a stack of LLaMA-style MLP blocks written out by hand in eager PyTorch:
RMSNorm as pow/mean/rsqrt/mul, SwiGLU as silu(a) * b, a tanh-GELU "soft cap" on the
output, residual adds, bf16 activations.

Memory-bound: between the GEMMs, chains of small elementwise kernels each read and
write the whole activation through HBM. Fix (--fix): torch.compile(model), which fuses
each chain into one generated kernel.
"""
import torch
import torch.nn as nn

import harness as H

args = H.parse(__doc__)
torch.manual_seed(0)
D, HID, LAYERS, TOKENS = H.size(1024, 64), H.size(2816, 128), 4, H.size(16384, 128)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * self.weight).type_as(x)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNorm(D)
        self.w1, self.w3 = nn.Linear(D, HID, bias=False), nn.Linear(D, HID, bias=False)
        self.w2 = nn.Linear(HID, D, bias=False)

    def forward(self, x):
        h = self.norm(x)
        a, b = self.w1(h), self.w3(h)
        return x + self.w2(a * torch.sigmoid(a) * b)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.out_norm = RMSNorm(D)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        x = self.out_norm(x)
        return 30.0 * torch.tanh(x / 30.0)  # soft cap, as Gemma 2 does on its logits


model = Model().to(H.DEV, dtype=torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=H.CUDA)
fwd = torch.compile(model) if args.fix else model
x = torch.randn(TOKENS, D, device=H.DEV, dtype=torch.bfloat16)
target = torch.randn(TOKENS, D, device=H.DEV, dtype=torch.bfloat16)


def step():
    loss = (fwd(x).float() - target.float()).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


H.run(step, args, "mlp_compile", samples_per_step=TOKENS)
