#!/usr/bin/env python3
"""Training a transformer language model on variable-length batches (bucketed by
length), calling torch.cuda.empty_cache() after every step "to avoid OOM", a pattern
common in fine-tuning scripts.

Allocator-bound: emptying the cache returns every free block to the driver, so the next
step's allocations go back to cudaMalloc (and cudaFree synchronizes the device). Fix
(--fix): drop the empty_cache() call.
"""
import torch
import torch.nn as nn

import harness as H

args = H.parse(__doc__, lambda ap: ap.add_argument(
    "--whole-graph", action="store_true", help="one CUDA graph of the whole step per length"))
WHOLE = args.whole_graph and H.CUDA
torch.manual_seed(0)
D, LAYERS, HEADS, B = H.size(768, 96), 6, 12, H.size(16, 2)
VOCAB = H.size(32000, 512)
LENGTHS = [H.size(n, n // 8) for n in (128, 192, 256, 384, 512)]

layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.0, batch_first=True, norm_first=True)
model = nn.ModuleDict({"emb": nn.Embedding(VOCAB, D),
                       "enc": nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False),
                       "head": nn.Linear(D, VOCAB)}).to(H.DEV)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=H.CUDA, capturable=WHOLE)
g = torch.Generator().manual_seed(0)
it = 0


def forward_backward(ids, mask):
    with H.autocast():
        h = model["enc"](model["emb"](ids[:, :-1]), mask=mask, is_causal=True)
        loss = nn.functional.cross_entropy(model["head"](h).float().view(-1, VOCAB), ids[:, 1:].reshape(-1))
    loss.backward()
    opt.step()


if WHOLE:
    static = {t: torch.randint(VOCAB, (B, t + 1), device=H.DEV) for t in LENGTHS}
    masks = {t: nn.Transformer.generate_square_subsequent_mask(t, device=H.DEV) for t in LENGTHS}
    graphs = {t: H.capture_whole_step(lambda t=t: forward_backward(static[t], masks[t]), opt) for t in LENGTHS}


def step():
    global it
    t = LENGTHS[int(torch.randint(len(LENGTHS), (1,), generator=g))]
    it += 1
    ids = torch.randint(VOCAB, (B, t + 1), device=H.DEV)
    if WHOLE:
        static[t].copy_(ids)
        graphs[t].replay()
    else:
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=H.DEV)
        forward_backward(ids, mask)
        opt.zero_grad(set_to_none=True)
    if not args.fix and H.CUDA:
        torch.cuda.empty_cache()


H.run(step, args, "empty_cache", samples_per_step=B)
