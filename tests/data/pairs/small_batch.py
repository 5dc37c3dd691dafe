#!/usr/bin/env python3
"""Fine-tuning a small transformer classifier at batch 8 (a GPU-poor default copied to
an H200).

Launch-bound: each step launches the same ~600 kernels whatever the batch, and at batch
8 each kernel is shorter than its launch. Fix (--fix): batch 32 (4x), same learning-rate
schedule scaled; throughput (samples/s) is what is compared.
"""
import torch
import torch.nn as nn

import harness as H

args = H.parse(__doc__)
torch.manual_seed(0)
D, LAYERS, HEADS, SEQ = H.size(384, 96), 6, 6, H.size(128, 16)
B = (32 if args.fix else 8) if not H.SMALL else (8 if args.fix else 2)
VOCAB, CLASSES = H.size(30522, 512), 2

layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.1, batch_first=True, norm_first=True)
encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
emb = nn.Embedding(VOCAB, D)
head = nn.Linear(D, CLASSES)
model = nn.ModuleDict({"emb": emb, "encoder": encoder, "head": head}).to(H.DEV)
opt = torch.optim.AdamW(model.parameters(), lr=3e-5 * B / 8, fused=H.CUDA)
ids_all = torch.randint(VOCAB, (64, B, SEQ), device=H.DEV)
labels_all = torch.randint(CLASSES, (64, B), device=H.DEV)
it = 0


def step():
    global it
    ids, labels = ids_all[it % 64], labels_all[it % 64]
    it += 1
    with H.autocast():
        h = model["encoder"](model["emb"](ids))
        loss = nn.functional.cross_entropy(model["head"](h[:, 0]).float(), labels)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


H.run(step, args, "small_batch", samples_per_step=B)
