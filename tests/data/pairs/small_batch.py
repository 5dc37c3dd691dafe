#!/usr/bin/env python3
"""Fine-tuning a small transformer classifier at batch 8 (a GPU-poor default copied to
an H200).

Launch-bound: each step launches the same ~600 kernels whatever the batch, and at batch
8 each kernel is shorter than its launch. Fix (--fix): batch 32 (4x), same learning-rate
schedule scaled; throughput (samples/s) is what is compared. Second fix (--graphs): keep
batch 8 and capture the model's forward and backward in CUDA Graphs with
torch.cuda.make_graphed_callables (the optimizer step stays eager). Third (--whole-graph):
capture the whole step, forward, loss, backward and the fused AdamW step (capturable), in
one torch.cuda.CUDAGraph replayed each iteration after copying the batch into its static
inputs: what the cuda-graphs remedy assumes (every launch between syncs captured).
"""
import torch
import torch.nn as nn

import harness as H

def options(ap):
    ap.add_argument("--graphs", action="store_true", help="capture forward+backward in CUDA Graphs instead")
    ap.add_argument("--whole-graph", action="store_true", help="capture the whole step in one CUDA Graph instead")


args = H.parse(__doc__, options)
WHOLE = args.whole_graph and H.CUDA
torch.manual_seed(0)
D, LAYERS, HEADS, SEQ = H.size(384, 96), 6, 6, H.size(128, 16)
B = (32 if args.fix else 8) if not H.SMALL else (8 if args.fix else 2)
VOCAB, CLASSES = H.size(30522, 512), 2



class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.emb = nn.Embedding(VOCAB, D)
        self.head = nn.Linear(D, CLASSES)

    def forward(self, ids):
        with H.autocast(cache_enabled=False) if args.graphs or args.whole_graph else H.autocast():
            return self.head(self.encoder(self.emb(ids))[:, 0]).float()


model = Classifier().to(H.DEV)
opt = torch.optim.AdamW(model.parameters(), lr=3e-5 * B / 8, fused=H.CUDA, capturable=WHOLE)
ids_all = torch.randint(VOCAB, (64, B, SEQ), device=H.DEV)
labels_all = torch.randint(CLASSES, (64, B), device=H.DEV)
fwd = model
if args.graphs and H.CUDA:
    fwd = torch.cuda.make_graphed_callables(model, (ids_all[0],))
it = 0


def step():
    global it
    ids, labels = ids_all[it % 64], labels_all[it % 64]
    it += 1
    loss = nn.functional.cross_entropy(fwd(ids), labels)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


if WHOLE:
    # The recipe of PyTorch's CUDA Graphs notes ("whole network capture"): warm up on a side
    # stream, then capture one whole iteration on static tensors.
    static_ids, static_labels = ids_all[0].clone(), labels_all[0].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(model(static_ids), static_labels).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = nn.functional.cross_entropy(model(static_ids), static_labels)
        static_loss.backward()
        opt.step()

    def step():  # noqa: F811 (the captured step replaces the eager one)
        global it
        static_ids.copy_(ids_all[it % 64])
        static_labels.copy_(labels_all[it % 64])
        it += 1
        graph.replay()

H.run(step, args, "small_batch", samples_per_step=B)
