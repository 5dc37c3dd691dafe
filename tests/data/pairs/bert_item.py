#!/usr/bin/env python3
"""Fine-tuning a BERT-style encoder for sequence classification, with the per-step
logging found in many fine-tuning scripts: loss.item(), accuracy.item(), the gradient
norm and the norm of each layer's gradients as Python floats every step, and
torch.cuda.synchronize() around each phase to time it.

Sync-bound: ~16 .item() and 4 synchronizations per step drain the GPU's queue, so the
host's launches and the GPU's work never overlap. Fix (--fix): keep the metrics on the
GPU, read them every 50 steps, and time phases with CUDA events only when logging
(here: not at all in the timed steps). Second fix (--phase-graphs): keep every sync and
.item(), and capture what runs between them (the forward pass and loss, the backward pass,
clipping and the optimizer step) in three CUDA Graphs sharing one pool, replayed in
capture order: chokepoint's first remedy for this job, cuda-graphs, as its what-if models
it (every run of launches between syncs becomes one graph launch).
"""
import time

import torch
import torch.nn as nn

import harness as H

def options(ap):
    ap.add_argument("--phase-graphs", action="store_true", help="capture the phases between syncs in CUDA Graphs")


args = H.parse(__doc__, options)
PHASES = args.phase_graphs and H.CUDA and not args.fix
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
opt = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=H.CUDA, capturable=PHASES)
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


if PHASES:
    static_ids, static_labels = ids_all[0].clone(), labels_all[0].clone()

    def forward():
        with H.autocast(cache_enabled=False):
            logits = model(static_ids)
            return logits, nn.functional.cross_entropy(logits.float(), static_labels)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            forward()[1].backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    opt.zero_grad(set_to_none=True)
    g_fwd, g_bwd, g_opt = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(g_fwd):
        s_logits, s_loss = forward()
    with torch.cuda.graph(g_bwd, pool=g_fwd.pool()):
        s_loss.backward()
    with torch.cuda.graph(g_opt, pool=g_fwd.pool()):
        s_gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    def step():  # noqa: F811 (the same step, its phases replayed from graphs)
        i = state["it"] % 256
        state["it"] += 1
        static_ids.copy_(ids_all[i])
        static_labels.copy_(labels_all[i])
        t0 = time.perf_counter()
        g_fwd.replay()
        H.sync()
        t1 = time.perf_counter()
        g_bwd.replay()
        H.sync()
        t2 = time.perf_counter()
        layer_norms = [p.grad.norm().item() for _, p in groups]
        g_opt.replay()
        H.sync()
        acc = (s_logits.argmax(-1) == static_labels).float().mean()
        rec = {"layer_grad_norms": layer_norms, "loss": s_loss.item(), "acc": acc.item(), "grad_norm": s_gnorm.item(),
               "fwd_ms": (t1 - t0) * 1e3, "bwd_ms": (t2 - t1) * 1e3}
        H.sync()
        log.append(rec)


H.run(step, args, "bert_item", samples_per_step=B)
