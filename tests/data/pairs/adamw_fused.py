#!/usr/bin/env python3
"""Training a ViT-S/16-style image classifier (timm's layout: 12 blocks, ~150 parameter
tensors) with AdamW(foreach=False), as older training scripts and some libraries still
pass.

Host-bound in the optimizer: the for-loop AdamW launches a dozen small kernels per
parameter tensor, ~1,800 per step, each shorter than its launch. Fix (--fix):
AdamW(fused=True), one multi-tensor kernel per group of tensors. Second fix (--whole-graph):
keep the for-loop AdamW (capturable) and capture the whole step, forward, loss, backward and
optimizer, in one torch.cuda.CUDAGraph replayed each iteration: what chokepoint's first
remedy for this job, cuda-graphs, assumes.
"""
import torch
import torch.nn as nn

import harness as H

def options(ap):
    ap.add_argument("--whole-graph", action="store_true", help="capture the whole step in one CUDA Graph instead")


args = H.parse(__doc__, options)
WHOLE = args.whole_graph and H.CUDA
torch.manual_seed(0)
D, DEPTH, HEADS, B = H.size(384, 96), 12, 6, H.size(64, 2)
PATCHES = H.size(196, 16)


class ViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Linear(3 * 16 * 16, D)
        self.cls = nn.Parameter(torch.zeros(1, 1, D))
        self.pos = nn.Parameter(torch.zeros(1, PATCHES + 1, D))
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, DEPTH, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 1000)

    def forward(self, patches):
        x = self.patch(patches)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], 1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


model = ViT().to(H.DEV)
if args.fix:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, fused=H.CUDA)
else:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, foreach=False,
                            capturable=WHOLE)
images = torch.randn(16, B, PATCHES, 3 * 16 * 16, device=H.DEV)
labels = torch.randint(1000, (16, B), device=H.DEV)
it = 0


def step_on(x, y):
    with H.autocast(cache_enabled=not WHOLE):
        loss = nn.functional.cross_entropy(model(x).float(), y)
    loss.backward()
    opt.step()


def step():
    global it
    x, y = images[it % 16], labels[it % 16]
    it += 1
    step_on(x, y)
    opt.zero_grad(set_to_none=True)


if WHOLE:
    static_x, static_y = images[0].clone(), labels[0].clone()
    graph = H.capture_whole_step(lambda: step_on(static_x, static_y), opt)

    def step():  # noqa: F811 (the captured step replaces the eager one)
        global it
        static_x.copy_(images[it % 16])
        static_y.copy_(labels[it % 16])
        it += 1
        graph.replay()


print(f"adamw_fused: {sum(1 for _ in model.parameters())} parameter tensors", flush=True)
H.run(step, args, "adamw_fused", samples_per_step=B)
