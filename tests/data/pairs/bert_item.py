#!/usr/bin/env python3
"""Fine-tuning a BERT-style encoder for sequence classification, with the per-step
logging found in many fine-tuning scripts: loss.item(), accuracy.item(), the gradient
norm and the norm of each layer's gradients as Python floats every step, and
torch.cuda.synchronize() around each phase to time it.

Sync-bound: ~16 .item() and 4 synchronizations per step drain the GPU's queue, so the
host's launches and the GPU's work never overlap. Fix (--fix): keep the metrics on the
GPU, read them every 50 steps, and time phases with CUDA events only when logging
(here: not at all in the timed steps).
"""
import time

import torch
import torch.nn as nn

import harness as H

args = H.parse(__doc__)
torch.manual_seed(0)
D, LAYERS, HEADS, SEQ, B = H.size(512, 64), 6, 8, H.size(128, 16), H.size(32, 4)
VOCAB, CLASSES = H.size(30522, 512), 4


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.zeros(1, SEQ, D))
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, ids):
        h = self.encoder(self.emb(ids) + self.pos)
        return self.head(h[:, 0])


model = Classifier().to(H.DEV)
opt = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=H.CUDA)
ids_all = torch.randint(VOCAB, (256, B, SEQ), device=H.DEV)
labels_all = torch.randint(CLASSES, (256, B), device=H.DEV)
groups = [(n, p) for n, p in model.named_parameters() if n.endswith("linear1.weight") or n.endswith("linear2.weight")]
state = {"it": 0, "loss": torch.zeros((), device=H.DEV), "acc": torch.zeros((), device=H.DEV)}
log = []


def step():
    i = state["it"] % 256
    state["it"] += 1
    ids, labels = ids_all[i], labels_all[i]
    t0 = time.perf_counter()
    with H.autocast():
        logits = model(ids)
        loss = nn.functional.cross_entropy(logits.float(), labels)
    if not args.fix:
        H.sync()
    t1 = time.perf_counter()
    loss.backward()
    if not args.fix:
        H.sync()
    t2 = time.perf_counter()
    layer_norms = None if args.fix else [p.grad.norm().item() for _, p in groups]
    gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    if not args.fix:
        H.sync()
    acc = (logits.argmax(-1) == labels).float().mean()
    if args.fix:
        state["loss"] += loss.detach()
        state["acc"] += acc
        if state["it"] % 50 == 0:
            log.append((state["loss"].item() / 50, state["acc"].item() / 50))
            state["loss"].zero_()
            state["acc"].zero_()
        return
    rec = {"layer_grad_norms": layer_norms, "loss": loss.item(), "acc": acc.item(), "grad_norm": gnorm.item(),
           "fwd_ms": (t1 - t0) * 1e3, "bwd_ms": (t2 - t1) * 1e3}
    H.sync()
    log.append(rec)


H.run(step, args, "bert_item", samples_per_step=B)
