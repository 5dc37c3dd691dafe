#!/usr/bin/env python3
"""Training a wide MLP regressor in FP32 (a surrogate model on tabular features).

Compute-bound on FP32 GEMMs without tensor cores: PyTorch's default float32 matmul
precision is "highest" (TF32 off for matmuls since 1.12). Fix (--fix):
torch.set_float32_matmul_precision("high"), which lets cuBLAS use TF32 tensor cores. Second fix (--autocast): bf16 autocast around the
forward pass and the loss instead (chokepoint's first remedy for this job).
"""
import torch
import torch.nn as nn

import harness as H

def options(ap):
    ap.add_argument("--autocast", action="store_true", help="bf16 autocast instead of the fix")


args = H.parse(__doc__, options)
if args.fix:
    torch.set_float32_matmul_precision("high")
torch.manual_seed(0)
WIDTH, DEPTH, B = H.size(4096, 64), 4, H.size(8192, 64)

layers = [nn.Linear(256, WIDTH), nn.ReLU()]
for _ in range(DEPTH):
    layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
layers += [nn.Linear(WIDTH, 1)]
model = nn.Sequential(*layers).to(H.DEV)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
# Features and targets of 64 batches, resident on the GPU (the dataset fits).
X = torch.randn(64, B, 256, device=H.DEV)
Y = torch.randn(64, B, 1, device=H.DEV)
it = 0


def step():
    global it
    x, y = X[it % 64], Y[it % 64]
    it += 1
    with H.autocast(enabled=args.autocast):
        loss = nn.functional.mse_loss(model(x).float(), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


H.run(step, args, "mlp_tf32", samples_per_step=B)
