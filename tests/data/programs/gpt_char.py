"""gpt_char.py -- character-level GPT training in the style of karpathy/nanoGPT.

Imitates: karpathy/nanoGPT train.py run with config/train_shakespeare_char.py
  (model.py GPT: 6 layers, 6 heads, 384 dim, block 256, dropout 0.2; batch 64;
  AdamW lr 1e-3 with linear warmup + cosine decay, beta2 0.99, grad clip 1.0,
  bf16 autocast, GradScaler (disabled for bf16), estimate_loss() every
  eval_interval iterations followed by a checkpoint save).
  The data is a uint16 memmap of random tokens (vocab 65, ~5 MB train.bin +
  val.bin) that is created in a scratch directory when it is missing.

Planted hot spot: get_batch() is nanoGPT's: it re-opens the np.memmap on every
  call and builds the batch on the main thread with a Python loop over the batch
  rows (`for i in ix`, iterating a torch tensor, slicing the memmap, astype,
  from_numpy, torch.stack), twice (x and y), then pin_memory().to(non_blocking).
  The batch is 128 rows on the GPU (nanoGPT's config: 64) so this host-side
  assembly is a larger share of the host-bound iteration. Measured on an H200
  (PyTorch 2.11): ~14.2 ms/iter plain vs ~13.1 ms/iter with --fix, i.e. the
  hot spot is only ~8-10% of the iteration, not more.

Fix (--fix): get_batch() reads the whole batch with one vectorised fancy-index
  of the memmap (ix[:, None] + arange(block+1)) and slices x / y from it, so
  the host work per batch is a handful of numpy/torch calls. Same random
  indices, same batches, same losses.

Printed line (every log_interval = 10 iterations), nanoGPT's format:
  iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms
  nanoGPT computes dt = t1 - t0 every iteration (t1 = time.time(); dt = t1 - t0;
  t0 = t1) and syncs only through `lossf = loss.item()` at logging iterations.
  Because the loop does not sync every iteration, the printed dt here is the
  wall time of the log interval divided by its number of iterations (the
  per-iteration t0/t1 bookkeeping is kept and summed), which is the true
  per-iteration wall time; the --result iter_ms uses the same values.
  Evaluation lines: step {iter_num}: train loss {:.4f}, val loss {:.4f}
"""

import inspect
import math
import os
import pickle
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROGRAM = "gpt_char"


# -----------------------------------------------------------------------------
# model (nanoGPT model.py, trimmed to what train.py uses)

class LayerNorm(nn.Module):
    """LayerNorm but with an optional bias."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class Block(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        print("number of parameters: %.2fM" % (self.get_num_params() / 1e6,))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0},
        ]
        print(f"num decayed parameter tensors: {len(decay_params)}, with {sum(p.numel() for p in decay_params):,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {sum(p.numel() for p in nodecay_params):,} parameters")
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        return optimizer


# -----------------------------------------------------------------------------

def prepare_data(data_dir, vocab_size, n_train, n_val, seed):
    """Like data/shakespeare_char/prepare.py, but random tokens."""
    train_bin = os.path.join(data_dir, 'train.bin')
    val_bin = os.path.join(data_dir, 'val.bin')
    if os.path.exists(train_bin) and os.path.exists(val_bin) and \
            os.path.getsize(train_bin) == 2 * n_train and os.path.getsize(val_bin) == 2 * n_val:
        return
    rng = np.random.default_rng(seed)
    rng.integers(0, vocab_size, size=n_train, dtype=np.uint16).tofile(train_bin + '.tmp')
    rng.integers(0, vocab_size, size=n_val, dtype=np.uint16).tofile(val_bin + '.tmp')
    os.replace(train_bin + '.tmp', train_bin)
    os.replace(val_bin + '.tmp', val_bin)
    with open(os.path.join(data_dir, 'meta.pkl'), 'wb') as f:
        pickle.dump({'vocab_size': vocab_size}, f)
    print(f"wrote {n_train:,} train tokens and {n_val:,} val tokens to {data_dir}")


def main():
    parser = common.common_parser(__doc__, default_iters=1000, small_iters=30)
    parser.add_argument('--batch_size', type=int, default=None, help='override the batch size')
    args = parser.parse_args()

    # -------------------------------------------------------------------------
    # config (config/train_shakespeare_char.py)
    out_dir = common.scratch_dir(PROGRAM)
    data_dir = out_dir
    eval_interval = 250
    log_interval = 10
    eval_iters = 20
    always_save_checkpoint = True
    gradient_accumulation_steps = 1
    batch_size = 128
    block_size = 256
    n_layer = 6
    n_head = 6
    n_embd = 384
    dropout = 0.2
    bias = False
    learning_rate = 1e-3
    max_iters = args.iters
    weight_decay = 1e-1
    beta1 = 0.9
    beta2 = 0.99
    grad_clip = 1.0
    decay_lr = True
    warmup_iters = 100
    lr_decay_iters = max(max_iters, 1)
    min_lr = 1e-4
    vocab_size = 65
    n_train, n_val = 2_500_000, 250_000
    if common.SMALL:
        eval_interval = 10
        eval_iters = 2
        batch_size = 8
        block_size = 32
        n_layer, n_head, n_embd = 2, 2, 64
        warmup_iters = 5
        n_train, n_val = 100_000, 10_000
    if args.batch_size:
        batch_size = args.batch_size
    device = common.DEVICE
    dtype = 'bfloat16'
    # -------------------------------------------------------------------------

    common.seed_everything(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device_type = 'cuda' if 'cuda' in device else 'cpu'
    ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
    ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

    prepare_data(data_dir, vocab_size, n_train, n_val, args.seed)

    # poor man's data loader (nanoGPT)
    def get_batch(split):
        # We recreate np.memmap every batch to avoid a memory leak, as per
        # https://stackoverflow.com/questions/45132940/numpy-memmap-memory-usage-want-to-iterate-once/61472122#61472122
        if split == 'train':
            data = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
        else:
            data = np.memmap(os.path.join(data_dir, 'val.bin'), dtype=np.uint16, mode='r')
        ix = torch.randint(len(data) - block_size, (batch_size,))
        if not args.fix:
            x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
            y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
        else:
            # FIX: one vectorised read of all rows, x and y are views of it
            rows = ix.numpy()[:, None] + np.arange(block_size + 1)
            xy = torch.from_numpy(data[rows].astype(np.int64))
            x = xy[:, :-1].contiguous()
            y = xy[:, 1:].contiguous()
        if device_type == 'cuda':
            x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
        else:
            x, y = x.to(device), y.to(device)
        return x, y

    iter_num = 0
    best_val_loss = 1e9

    model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                      bias=bias, vocab_size=vocab_size, dropout=dropout)
    gptconf = GPTConfig(**model_args)
    model = GPT(gptconf)
    model.to(device)

    scaler = torch.amp.GradScaler(device_type, enabled=(dtype == 'float16'))
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)

    raw_model = model
    if args.compile:
        print("compiling the model... (takes a ~minute)")
        model = torch.compile(model)

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    # learning rate decay scheduler (cosine with warmup)
    def get_lr(it):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / max(lr_decay_iters - warmup_iters, 1)
        decay_ratio = min(max(decay_ratio, 0.0), 1.0)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)

    # timing bookkeeping for --result (true wall time per iteration)
    iter_ms = common.IterTimes()
    eval_after = []        # iterations followed by estimate_loss()/checkpoint
    tainted = set()        # log windows that contain an evaluation
    window_start = 0       # first iteration of the current log window
    window_dt = 0.0        # sum of the per-iteration dt in the current window
    window_has_eval = False

    # training loop
    X, Y = get_batch('train')
    t0 = time.time()
    local_iter_num = 0
    while True:
        lr = get_lr(iter_num) if decay_lr else learning_rate
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr

        # evaluate the loss on train/val sets and write checkpoints
        if iter_num % eval_interval == 0:
            losses = estimate_loss()
            print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            if iter_num > 0:
                eval_after.append(iter_num - 1)
            window_has_eval = True
            if losses['val'] < best_val_loss or always_save_checkpoint:
                best_val_loss = losses['val']
                if iter_num > 0:
                    checkpoint = {
                        'model': raw_model.state_dict(),
                        'optimizer': optimizer.state_dict(),
                        'model_args': model_args,
                        'iter_num': iter_num,
                        'best_val_loss': best_val_loss,
                    }
                    print(f"saving checkpoint to {out_dir}")
                    torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))

        for micro_step in range(gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / gradient_accumulation_steps
            # immediately async prefetch next batch while model is doing the forward pass on the GPU
            X, Y = get_batch('train')
            scaler.scale(loss).backward()
        if grad_clip != 0.0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

        # timing and logging
        t1 = time.time()
        dt = t1 - t0
        t0 = t1
        window_dt += dt
        last = iter_num + 1 >= max_iters
        if iter_num % log_interval == 0 or last:
            # get loss as float. note: this is a CPU-GPU sync point
            lossf = loss.item() * gradient_accumulation_steps
            t1 = time.time()
            window_dt += t1 - t0   # the sync belongs to this window
            t0 = t1
            n = iter_num + 1 - window_start
            dt = window_dt / n     # true wall time per iteration over the window
            iter_ms.extend([dt * 1000.0] * n)
            if window_has_eval:
                tainted.update(range(window_start, iter_num + 1))
            window_start, window_dt, window_has_eval = iter_num + 1, 0.0, False
            print(f"iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms", flush=True)
        iter_num += 1
        local_iter_num += 1

        # termination conditions
        if iter_num >= max_iters:
            break

    common.write_result(args, PROGRAM, iter_ms, eval_after, tainted)


if __name__ == '__main__':
    main()
