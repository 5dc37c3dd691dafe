#!/usr/bin/env python3
"""Step time inside and outside trace windows of ONE process (gpu_window_cost.sh), so
that the comparison is free of the process-to-process noise of the GPU machine.

  window_cost.py chokepoint STEPS.json REC_DIR   the windows are the "step N" NVTX ranges
                                                 each window's trace file holds
  window_cost.py profiler STEPS.json             the active steps torch.profiler's
                                                 schedule recorded (window_loop.py lists them)
Prints: inside and outside medians (ms) and their ratio. Steps within 3 of a window's
edge and the first 100 steps are left out of both.
"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "tracer"))
import count_trace  # noqa: E402


def windows_of_rec(rec):
    wins = []
    for f in sorted(glob.glob(os.path.join(rec, "trace-*-w*.cptrace"))):
        out = {}
        count_trace.read(f, out)
        steps = sorted(int(k.split()[-1]) for k in out if k.startswith("marker_name_step "))
        if steps:
            wins.append(steps)
    return wins


def windows_of_active(active):
    wins, cur = [], []
    for n in active:
        if cur and n != cur[-1] + 1:
            wins.append(cur)
            cur = []
        cur.append(n)
    if cur:
        wins.append(cur)
    return wins


def main():
    kind, steps_json = sys.argv[1], sys.argv[2]
    data = json.load(open(steps_json))
    ms = data["ms"]
    wins = windows_of_rec(sys.argv[3]) if kind == "chokepoint" else windows_of_active(data["active"])
    inside, near = set(), set()
    for w in wins:
        lo, hi = w[0], w[-1]
        inside.update(range(lo + 3, hi - 2))
        near.update(range(lo - 3, hi + 4))
    ins = [ms[n - 1] for n in sorted(inside) if n > 100 and n <= len(ms)]
    outs = [ms[n - 1] for n in range(101, len(ms) + 1) if n not in near]
    if not ins or not outs:
        print(f"{kind}: {len(wins)} windows, too few steps inside ({len(ins)}) or outside ({len(outs)})")
        return
    i, o = statistics.median(ins), statistics.median(outs)
    print(f"{kind}: {len(wins)} windows, inside {i:.3f} ms ({len(ins)} steps), outside {o:.3f} ms "
          f"({len(outs)} steps), inside/outside {i / o:.3f}x")


if __name__ == "__main__":
    main()
