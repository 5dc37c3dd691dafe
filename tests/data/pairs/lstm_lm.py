#!/usr/bin/env python3
"""pytorch/examples word_language_model: a 2-layer LSTM language model trained with
truncated BPTT, batches sliced from the token stream held on the GPU (batchify /
get_batch), gradient clipping, plain SGD by hand.

No data loader and no host-side input: whatever limits it, it is not input. (Issue 10:
a live recording of this program read `input`.) No fix: a verdict case. With
--whole-graph, the step (forward, loss, backward, clipping, the SGD update, the hidden state
carried over) is captured in one torch.cuda.CUDAGraph and replayed: chokepoint's first
remedy for this job, cuda-graphs, applied.
"""
import torch
import torch.nn as nn

import harness as H

def options(ap):
    ap.add_argument("--whole-graph", action="store_true", help="capture the whole step in one CUDA Graph")


args = H.parse(__doc__, options)
WHOLE = args.whole_graph and H.CUDA
torch.manual_seed(0)
NTOKEN, EMSIZE, NHID, NLAYERS, BPTT, BSZ = H.size(33278, 512), H.size(650, 32), H.size(650, 32), 2, 35, 20


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.encoder = nn.Embedding(NTOKEN, EMSIZE)
        self.rnn = nn.LSTM(EMSIZE, NHID, NLAYERS, dropout=0.5)
        self.decoder = nn.Linear(NHID, NTOKEN)

    def forward(self, inp, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(inp)), hidden)
        return self.decoder(self.drop(output)).view(-1, NTOKEN), hidden


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous().to(H.DEV)


train_data = batchify(torch.randint(NTOKEN, (2_000_000,)), BSZ)
model = RNNModel().to(H.DEV)
criterion = nn.NLLLoss()
hidden = (torch.zeros(NLAYERS, BSZ, NHID, device=H.DEV), torch.zeros(NLAYERS, BSZ, NHID, device=H.DEV))
state = {"i": 0, "hidden": hidden}
lr = 20.0


def train_on(data, targets, hidden):
    output, hidden = model(data, hidden)
    loss = criterion(nn.functional.log_softmax(output, dim=-1), targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    return hidden


def next_batch():
    i = state["i"]
    if i + BPTT + 1 >= train_data.size(0):
        i = 0
    state["i"] = i + BPTT
    return train_data[i:i + BPTT], train_data[i + 1:i + 1 + BPTT].reshape(-1)


def step():
    data, targets = next_batch()
    hidden = tuple(h.detach() for h in state["hidden"])
    model.zero_grad()
    state["hidden"] = train_on(data, targets, hidden)


if WHOLE:
    static_data, static_targets = (t.clone() for t in next_batch())
    static_hidden = tuple(h.clone() for h in hidden)

    def captured():
        new = train_on(static_data, static_targets, static_hidden)
        for h, n in zip(static_hidden, new):
            h.copy_(n.detach())

    graph = H.capture_whole_step(captured, model)

    def step():  # noqa: F811 (the captured step replaces the eager one)
        data, targets = next_batch()
        static_data.copy_(data)
        static_targets.copy_(targets)
        graph.replay()


H.run(step, args, "lstm_lm", samples_per_step=BSZ * BPTT)
