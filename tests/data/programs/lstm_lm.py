"""lstm_lm.py -- LSTM language model in the style of pytorch/examples word_language_model/main.py.

Imitates: pytorch/examples word_language_model main.py
  (`--model LSTM --emsize 650 --nhid 650 --dropout 0.5 --tied --lr 20
  --clip 0.25 --bptt 35 --batch_size 20 --log-interval 200`): RNNModel
  (Embedding -> Dropout -> 2-layer nn.LSTM -> Dropout -> tied Linear ->
  log_softmax), NLLLoss, corpus batchified on the GPU, get_batch(source, i),
  repackage_hidden(), clip_grad_norm_(0.25), the example's manual SGD update
  `for p in model.parameters(): p.data.add_(p.grad, alpha=-lr)`,
  `total_loss += loss.item()` every batch, evaluate() on the validation split
  after every epoch, torch.save(model) when the validation loss improves,
  lr /= 4 when it does not.
  The corpus is ~2M random token ids (vocab 10000) generated in memory:
  1.4M train (2000 batches per epoch), 70k valid, 70k test.

Planted hot spot: per batch, the Python loop over the parameters doing the
  manual SGD update (one add_ kernel launch per parameter) plus
  `total_loss += loss.item()`, which synchronises the host with the GPU every
  batch so the host never runs ahead and launch overhead is serialised with
  GPU execution.

Fix (--fix): torch.optim.SGD(model.parameters(), lr=lr, foreach=True) (one
  multi-tensor kernel) and `total_loss += loss.detach()` accumulated on the
  GPU; `.item()` is called only at log time.

Printed line (every log_interval = 200 batches), the example's format:
  | epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | loss {:5.2f} | ppl {:8.2f}
  ms/batch = elapsed * 1000 / log_interval, elapsed = time.time() - start_time
  over the log interval (start_time is reset after each print and at the start
  of each epoch). --result iter_ms gives every batch of a log window that
  window's elapsed / (number of batches in the window), i.e. the true wall
  time per batch (the window ends at a sync: loss.item() every batch without
  --fix, total_loss.item() at the print with --fix).
  Epoch end: | end of epoch {:3d} | time: {:5.2f}s | valid loss {:5.2f} | valid ppl {:8.2f}
"""

import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROGRAM = "lstm_lm"


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


class Corpus(object):
    """Stand-in for data.Corpus: random token ids instead of wikitext-2."""

    def __init__(self, ntokens, n_train, n_valid, n_test, seed):
        g = torch.Generator().manual_seed(seed)
        self.ntokens = ntokens
        self.train = torch.randint(ntokens, (n_train,), generator=g, dtype=torch.long)
        self.valid = torch.randint(ntokens, (n_valid,), generator=g, dtype=torch.long)
        self.test = torch.randint(ntokens, (n_test,), generator=g, dtype=torch.long)


def main():
    parser = common.common_parser(__doc__, default_iters=2500, small_iters=30)
    parser.add_argument('--emsize', type=int, default=32 if common.SMALL else 650)
    parser.add_argument('--nhid', type=int, default=32 if common.SMALL else 650)
    parser.add_argument('--nlayers', type=int, default=2)
    parser.add_argument('--lr', type=float, default=20)
    parser.add_argument('--clip', type=float, default=0.25)
    parser.add_argument('--batch_size', type=int, default=4 if common.SMALL else 20)
    parser.add_argument('--bptt', type=int, default=35)
    parser.add_argument('--dropout', type=float, default=0.5)
    parser.add_argument('--log-interval', type=int, default=5 if common.SMALL else 200)
    args = parser.parse_args()

    common.seed_everything(args.seed)
    device = torch.device(common.DEVICE)

    ntokens = 1000 if common.SMALL else 10000
    if common.SMALL:
        corpus = Corpus(ntokens, 4 * 35 * 10, 2000, 2000, args.seed)       # 10 batches/epoch
    else:
        corpus = Corpus(ntokens, 20 * 35 * 2000, 70_000, 70_000, args.seed)  # 2000 batches/epoch

    def batchify(data, bsz):
        # Work out how cleanly we can divide the dataset into bsz parts.
        nbatch = data.size(0) // bsz
        # Trim off any extra elements that wouldn't cleanly fit (remainders).
        data = data.narrow(0, 0, nbatch * bsz)
        # Evenly divide the data across the bsz batches.
        data = data.view(bsz, -1).t().contiguous()
        return data.to(device)

    eval_batch_size = 10
    train_data = batchify(corpus.train, args.batch_size)
    val_data = batchify(corpus.valid, eval_batch_size)

    model = RNNModel('LSTM', ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, True).to(device)
    raw_model = model
    if args.compile:
        model = torch.compile(model)
    criterion = nn.NLLLoss()
    save_path = os.path.join(common.scratch_dir(PROGRAM), 'model.pt')

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(repackage_hidden(v) for v in h)

    def get_batch(source, i):
        seq_len = min(args.bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].view(-1)
        return data, target

    def evaluate(data_source):
        # Turn on evaluation mode which disables dropout.
        model.eval()
        total_loss = 0.
        hidden = raw_model.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, args.bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    iter_ms = common.IterTimes()
    state = {"lr": args.lr}
    optimizer = None
    if args.fix:
        # FIX: one multi-tensor SGD step instead of a Python loop over the parameters
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, foreach=True)

    def train(epoch):
        # Turn on training mode which enables dropout.
        model.train()
        lr = state["lr"]
        total_loss = torch.zeros((), device=device) if args.fix else 0.
        start_time = time.time()
        window = 0
        hidden = raw_model.init_hidden(args.batch_size)
        nbatches = len(train_data) // args.bptt
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            if len(iter_ms) + window >= args.iters:
                break
            data, targets = get_batch(train_data, i)
            # Starting each batch, we detach the hidden state from how it was previously produced.
            # If we didn't, the model would try backpropagating all the way to start of the dataset.
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()

            # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            if not args.fix:
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-lr)
                total_loss += loss.item()
            else:
                for g in optimizer.param_groups:
                    g['lr'] = lr
                optimizer.step()
                total_loss += loss.detach()
            window += 1

            last = len(iter_ms) + window >= args.iters
            if (batch % args.log_interval == 0 and batch > 0) or last:
                cur_loss = float(total_loss) / window   # float() syncs with --fix
                elapsed = time.time() - start_time
                iter_ms.extend([elapsed * 1000 / window] * window)
                print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | '
                      'loss {:5.2f} | ppl {:8.2f}'.format(
                          epoch, batch, nbatches, lr,
                          elapsed * 1000 / args.log_interval, cur_loss, math.exp(cur_loss)), flush=True)
                total_loss = torch.zeros((), device=device) if args.fix else 0.
                window = 0
                start_time = time.time()
        if window > 0:  # batches after the last print of the epoch (not printed by the example)
            float(total_loss)
            elapsed = time.time() - start_time
            iter_ms.extend([elapsed * 1000 / window] * window)

    # Loop over epochs.
    best_val_loss = None
    eval_after = []
    epoch = 1
    while len(iter_ms) < args.iters:
        epoch_start_time = time.time()
        train(epoch)
        if len(iter_ms) < args.iters:
            eval_after.append(len(iter_ms) - 1)
        val_loss = evaluate(val_data)
        print('-' * 89)
        print('| end of epoch {:3d} | time: {:5.2f}s | valid loss {:5.2f} | '
              'valid ppl {:8.2f}'.format(epoch, (time.time() - epoch_start_time),
                                         val_loss, math.exp(val_loss)))
        print('-' * 89)
        # Save the model if the validation loss is the best we've seen so far.
        if not best_val_loss or val_loss < best_val_loss:
            with open(save_path, 'wb') as f:
                torch.save(raw_model, f)
            best_val_loss = val_loss
        else:
            # Anneal the learning rate if no improvement has been seen in the validation dataset.
            state["lr"] /= 4.0
        epoch += 1

    common.write_result(args, PROGRAM, iter_ms, eval_after)


if __name__ == '__main__':
    main()
