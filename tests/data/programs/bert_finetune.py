"""bert_finetune.py -- BERT sequence-classification fine-tuning in the style of
HuggingFace transformers examples/pytorch/text-classification/run_glue_no_trainer.py.

Imitates: run_glue_no_trainer.py (`--max_length 128 --pad_to_max_length
  --per_device_train_batch_size 32 --learning_rate 2e-5`) without accelerate:
  BertForSequenceClassification built from BertConfig (12 layers, hidden 768,
  12 heads, vocab 30522, 2 labels; no download), a synthetic GLUE-like dataset
  of random input_ids with random lengths (64..128) and random 0/1 labels in a
  torch Dataset, DataLoader(batch 32, shuffle, collate_fn that pads to
  max_length with pad id 0 and builds attention_mask / token_type_ids, like
  DataCollatorWithPadding without a tokenizer), torch.optim.AdamW with the
  no-decay parameter groups, get_linear_schedule_with_warmup, bf16 autocast,
  evaluation over a few batches every eval_steps steps and a checkpoint
  (model.state_dict()) after each evaluation.

Planted hot spot: a common progress-metrics pattern: every step the
  predictions and labels are copied to the host (`preds.cpu().numpy()`,
  `labels.cpu().numpy()`) and appended to Python lists, and
  `tr_loss += loss.item()` is accumulated on the host. Both synchronise the
  host with the GPU every step, so the host cannot queue work ahead and its
  launch overhead is serialised with the GPU work.

Fix (--fix): the loss sum and the number of correct predictions are
  accumulated in GPU tensors (`tr_loss += loss.detach()`,
  `correct += (preds == labels).sum()`); the host reads them (.item()) only at
  logging steps.

Printed line (every logging_steps = 10 steps):
  step {s} | loss {l:.4f} | {ms:.1f} ms/step | acc {a:.3f}
  ms/step is the wall time since the previous log line divided by the number
  of steps in the interval (time.time() deltas, the interval ends with a
  host sync), loss and acc are averaged over the interval. --result iter_ms
  gives every step of an interval that interval's ms/step.
  Evaluation: eval step {s} | eval_loss {:.4f} | eval_accuracy {:.4f}
"""

import math
import os
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup  # noqa: E402

PROGRAM = "bert_finetune"


class SyntheticGlueDataset(Dataset):
    """Random 'tokenized' sentence pairs: variable length input_ids + a label."""

    def __init__(self, n, vocab_size, min_len, max_len, seed):
        g = torch.Generator().manual_seed(seed)
        self.lengths = torch.randint(min_len, max_len + 1, (n,), generator=g).tolist()
        self.input_ids = [torch.randint(1000, vocab_size, (L,), generator=g) for L in self.lengths]
        for ids in self.input_ids:
            ids[0] = 101   # [CLS]
            ids[-1] = 102  # [SEP]
        self.labels = torch.randint(0, 2, (n,), generator=g).tolist()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return {"input_ids": self.input_ids[idx], "labels": self.labels[idx]}


def make_collate(max_length, pad_token_id=0):
    """Pad to max_length (run_glue's --pad_to_max_length), no tokenizer needed."""

    def collate(features):
        bsz = len(features)
        input_ids = torch.full((bsz, max_length), pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((bsz, max_length), dtype=torch.long)
        for i, f in enumerate(features):
            ids = f["input_ids"][:max_length]
            input_ids[i, :len(ids)] = ids
            attention_mask[i, :len(ids)] = 1
        return {
            "input_ids": input_ids,
            "token_type_ids": torch.zeros_like(input_ids),
            "attention_mask": attention_mask,
            "labels": torch.tensor([f["labels"] for f in features], dtype=torch.long),
        }

    return collate


def main():
    parser = common.common_parser(__doc__, default_iters=250, small_iters=25)
    parser.add_argument("--per_device_train_batch_size", type=int, default=4 if common.SMALL else 32)
    parser.add_argument("--per_device_eval_batch_size", type=int, default=4 if common.SMALL else 64)
    parser.add_argument("--max_length", type=int, default=32 if common.SMALL else 128)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--num_warmup_steps", type=int, default=5 if common.SMALL else 100)
    parser.add_argument("--logging_steps", type=int, default=5 if common.SMALL else 10)
    parser.add_argument("--eval_steps", type=int, default=10 if common.SMALL else 100)
    parser.add_argument("--max_eval_batches", type=int, default=2 if common.SMALL else 10)
    args = parser.parse_args()

    common.seed_everything(args.seed)
    device = torch.device(common.DEVICE)
    output_dir = common.scratch_dir(PROGRAM)

    if common.SMALL:
        config = BertConfig(vocab_size=30522, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=128, max_position_embeddings=128, num_labels=2)
    else:
        config = BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                            intermediate_size=3072, max_position_embeddings=512, num_labels=2)
    model = BertForSequenceClassification(config)
    model.to(device)
    raw_model = model
    if args.compile:
        model = torch.compile(model)

    n_train = args.per_device_train_batch_size * (50 if common.SMALL else 400)
    train_dataset = SyntheticGlueDataset(n_train, config.vocab_size, args.max_length // 2, args.max_length, args.seed)
    eval_dataset = SyntheticGlueDataset(args.per_device_eval_batch_size * args.max_eval_batches,
                                        config.vocab_size, args.max_length // 2, args.max_length, args.seed + 1)
    data_collator = make_collate(args.max_length)
    train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=data_collator,
                                  batch_size=args.per_device_train_batch_size)
    eval_dataloader = DataLoader(eval_dataset, collate_fn=data_collator,
                                 batch_size=args.per_device_eval_batch_size)

    # Optimizer
    # Split weights in two groups, one with weight decay and the other not.
    no_decay = ["bias", "LayerNorm.weight"]
    optimizer_grouped_parameters = [
        {
            "params": [p for n, p in raw_model.named_parameters() if not any(nd in n for nd in no_decay)],
            "weight_decay": args.weight_decay,
        },
        {
            "params": [p for n, p in raw_model.named_parameters() if any(nd in n for nd in no_decay)],
            "weight_decay": 0.0,
        },
    ]
    optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=args.learning_rate)

    max_train_steps = args.iters
    num_update_steps_per_epoch = len(train_dataloader)
    num_train_epochs = math.ceil(max_train_steps / num_update_steps_per_epoch)
    lr_scheduler = get_linear_schedule_with_warmup(
        optimizer=optimizer,
        num_warmup_steps=args.num_warmup_steps,
        num_training_steps=max_train_steps,
    )
    autocast = torch.autocast(device_type=device.type, dtype=torch.bfloat16)

    print("***** Running training *****")
    print(f"  Num examples = {len(train_dataset)}")
    print(f"  Num Epochs = {num_train_epochs}")
    print(f"  Instantaneous batch size per device = {args.per_device_train_batch_size}")
    print(f"  Total optimization steps = {max_train_steps}")
    print(f"  Parameters = {sum(p.numel() for p in raw_model.parameters()) / 1e6:.1f}M")

    def evaluate(step):
        model.eval()
        losses, correct, total = [], 0, 0
        for batch in eval_dataloader:
            batch = {k: v.to(device) for k, v in batch.items()}
            with torch.no_grad(), autocast:
                outputs = model(**batch)
            predictions = outputs.logits.argmax(dim=-1)
            losses.append(outputs.loss.float().item())
            correct += (predictions == batch["labels"]).sum().item()
            total += batch["labels"].numel()
        model.train()
        print(f"eval step {step} | eval_loss {np.mean(losses):.4f} | eval_accuracy {correct / total:.4f}", flush=True)

    iter_ms = common.IterTimes()
    eval_after = []
    completed_steps = 0
    # progress accumulators
    if args.fix:
        tr_loss = torch.zeros((), device=device)
        n_correct = torch.zeros((), device=device, dtype=torch.long)
    else:
        tr_loss = 0.0
        all_preds, all_labels = [], []
    n_seen = 0
    steps_in_window = 0
    t_log = time.time()

    for epoch in range(num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            with autocast:
                outputs = model(**batch)
            loss = outputs.loss
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            completed_steps += 1
            steps_in_window += 1

            # progress metrics
            preds = outputs.logits.argmax(dim=-1)
            if not args.fix:
                tr_loss += loss.item()
                all_preds.append(preds.cpu().numpy())
                all_labels.append(batch["labels"].cpu().numpy())
            else:
                tr_loss += loss.detach().float()
                n_correct += (preds == batch["labels"]).sum()
            n_seen += batch["labels"].numel()

            if completed_steps % args.logging_steps == 0 or completed_steps >= max_train_steps:
                if not args.fix:
                    avg_loss = tr_loss / steps_in_window
                    acc = float((np.concatenate(all_preds) == np.concatenate(all_labels)).mean())
                    all_preds, all_labels = [], []
                    tr_loss = 0.0
                else:
                    avg_loss = tr_loss.item() / steps_in_window
                    acc = n_correct.item() / n_seen
                    tr_loss.zero_()
                    n_correct.zero_()
                now = time.time()
                ms = (now - t_log) * 1000.0 / steps_in_window
                iter_ms.extend([ms] * steps_in_window)
                print(f"step {completed_steps} | loss {avg_loss:.4f} | {ms:.1f} ms/step | acc {acc:.3f}", flush=True)
                steps_in_window, n_seen = 0, 0

                if completed_steps % args.eval_steps == 0 and completed_steps < max_train_steps:
                    eval_after.append(completed_steps - 1)
                    evaluate(completed_steps)
                    torch.save(raw_model.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))
                    print(f"saved checkpoint to {output_dir}", flush=True)
                t_log = time.time()

            if completed_steps >= max_train_steps:
                break
        if completed_steps >= max_train_steps:
            break

    evaluate(completed_steps)
    torch.save(raw_model.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))
    common.write_result(args, PROGRAM, iter_ms, eval_after)


if __name__ == "__main__":
    main()
