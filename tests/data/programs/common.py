"""Shared helpers for the chokepoint validation training programs.

Only plumbing lives here (size selection, the common command-line options,
scratch directories, the --result JSON). Every program writes its own
training loop, data loading, logging, evaluation and checkpointing.

Result JSON written by --result FILE:
  program     name of the program (e.g. "gpt_char")
  fix         true when --fix was given
  compile     true when --compile was given
  iter_ms     wall milliseconds of every training iteration, in order, measured
              the way the program prints it (interval-averaged where the loop
              does not synchronise every iteration, see each program)
  eval_iters  indices i of the training iterations that are followed by an
              evaluation / checkpoint pass (before iteration i+1)
  median_ms   median of iter_ms excluding the first 10% of iterations, every
              i in eval_iters, every i+1 for i in eval_iters (whichever
              iteration's timer absorbed the pass), and any further iterations
              the program reports as tainted (e.g. an interval-averaged log
              window that contained an evaluation)
  iter_end_unix  (where the program keeps iter_ms in an IterTimes) the wall clock
              (time.time(), CLOCK_REALTIME seconds) at which each iteration ended:
              the moment its log window's time was taken, less the window's later
              iterations at its mean. chokepoint stamps its recordings with the same
              clock, so the iterations a recording's stack bursts held can be picked out
              (same_stretch.py)
  device      torch.cuda.get_device_name() or "cpu"
  small       true when the tiny CPU configuration was used
"""

import argparse
import json
import math
import os
import random
import statistics
import tempfile
import time

import numpy as np
import torch

# Tiny sizes when there is no GPU (smoke test on a CPU-only machine), or when
# forced with CHOKEPOINT_SMALL=1.
SMALL = (not torch.cuda.is_available()) or os.environ.get("CHOKEPOINT_SMALL") == "1"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def common_parser(description, default_iters, small_iters):
    """argparse parser with the options every program takes."""
    p = argparse.ArgumentParser(
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int,
                   default=small_iters if SMALL else default_iters,
                   help="number of training iterations (default: %(default)s)")
    p.add_argument("--compile", action="store_true",
                   help="wrap the model in torch.compile")
    p.add_argument("--fix", action="store_true",
                   help="apply the fix for the planted hot spot")
    p.add_argument("--result", type=str, default=None,
                   help="write the per-iteration timings as JSON to this file")
    p.add_argument("--seed", type=int, default=1337)
    return p


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def scratch_dir(program):
    """Per-program scratch directory for data files and checkpoints."""
    base = os.environ.get("CHOKEPOINT_PROGRAMS_TMP",
                          os.path.join(tempfile.gettempdir(), "chokepoint_programs"))
    d = os.path.join(base, program + ("_small" if SMALL else ""))
    os.makedirs(d, exist_ok=True)
    return d


def device_name():
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "cpu"


def excluded_indices(n, eval_iters, tainted=()):
    skip = set(range(int(math.ceil(0.1 * n))))
    for i in eval_iters:
        skip.add(i)
        skip.add(i + 1)
    skip.update(tainted)
    return skip


def median_ms(iter_ms, eval_iters, tainted=()):
    skip = excluded_indices(len(iter_ms), eval_iters, tainted)
    kept = [t for i, t in enumerate(iter_ms) if i not in skip]
    if not kept:  # very short runs: fall back to everything but the first one
        kept = iter_ms[1:] or iter_ms
    return statistics.median(kept) if kept else float("nan")


class IterTimes(list):
    """iter_ms that also notes when each iteration ended (time.time() at the call that
    added it: programs add a window's times right after taking its end time)."""

    def __init__(self):
        super().__init__()
        self.ends = []

    def append(self, ms):
        super().append(ms)
        self.ends.append(time.time())

    def extend(self, values):
        values = list(values)
        now = time.time()
        later = 0.0
        ends = []
        for ms in reversed(values):
            ends.append(now - later)
            later += ms / 1000.0
        super().extend(values)
        self.ends.extend(reversed(ends))


def write_result(args, program, iter_ms, eval_iters, tainted=()):
    """Print the median and, with --result, write the JSON described above."""
    med = median_ms(iter_ms, eval_iters, tainted)
    print(f"[{program}] {len(iter_ms)} iterations, median {med:.2f} ms/iter "
          f"(fix={bool(args.fix)}, compile={bool(args.compile)}, device={device_name()})",
          flush=True)
    if args.result:
        out = {
            "program": program,
            "fix": bool(args.fix),
            "compile": bool(args.compile),
            "iter_ms": [round(float(t), 4) for t in iter_ms],
            "median_ms": round(float(med), 4),
            "eval_iters": sorted(int(i) for i in eval_iters),
            **({"iter_end_unix": [round(float(t), 6) for t in iter_ms.ends]}
               if isinstance(iter_ms, IterTimes) else {}),
            "device": device_name(),
            "small": SMALL,
        }
        d = os.path.dirname(os.path.abspath(args.result))
        os.makedirs(d, exist_ok=True)
        with open(args.result, "w") as f:
            json.dump(out, f)
            f.write("\n")
    return med
