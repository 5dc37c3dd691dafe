#!/usr/bin/env python3
"""Training an MLP on a tabular dataset held in host memory, batch by batch.

The whole table is a CPU tensor (loaded once from disk in a real job); each step slices
the next batch and copies it to the GPU with `.to(device)`: pageable memory, so the copy
is staged through a driver buffer at a fraction of the link's speed and the Python
thread waits for it. Transfer-bound. Fix (--fix): pin the table once
(`X.pin_memory()`) and copy with `non_blocking=True`.
"""
import torch
import torch.nn as nn

import harness as H

args = H.parse(__doc__)
torch.manual_seed(0)
ROWS, FEAT, B = H.size(1 << 20, 4096), 256, H.size(65536, 256)
X = torch.randn(ROWS, FEAT)
Y = torch.randn(ROWS, 1)
if args.fix and H.CUDA:
    X, Y = X.pin_memory(), Y.pin_memory()
model = nn.Sequential(nn.Linear(FEAT, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                      nn.Linear(1024, 1)).to(H.DEV)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=H.CUDA)
pos = 0


def step():
    global pos
    if pos + B > ROWS:
        pos = 0
    x = X[pos:pos + B].to(H.DEV, non_blocking=args.fix)
    y = Y[pos:pos + B].to(H.DEV, non_blocking=args.fix)
    pos += B
    with H.autocast():
        loss = nn.functional.mse_loss(model(x).float(), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


H.run(step, args, "tabular_pinned", samples_per_step=B)
