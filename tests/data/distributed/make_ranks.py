#!/usr/bin/env python3
"""Makes the ranks of a synthetic distributed job from one real single-GPU Kineto trace.

Every rank is the same recorded trace (tests/data/kineto/*.json.gz, made on the H200)
with distributedInfo {backend nccl, rank, world_size} and two NCCL all-reduce kernels
planted per ProfilerStep:
  - a gradient bucket in the middle of the step's GPU work, on a side stream, overlapped
    with compute (--mid-ms long);
  - the last bucket after the step's last GPU op, with nothing beside it (--end-ms long):
    the time after it moves later by its length (the optimizer waits for it).
With --straggler R --delay-ms D, rank R starts each step's work D ms late (time inserted
after its step starts: its host is busy); the other ranks then wait D ms in each
all-reduce (their kernels start on time and end when rank R's do), as NCCL ranks do.
Arrivals of the other ranks are spread by a deterministic jitter of up to 20 us.
With --node-offset-ms X, ranks of the second half are recorded on a node whose clock is
X ms ahead (their baseTimeNanoseconds) and written under OUT/node1/, the others under
OUT/node0/: the input of the clock alignment (docs/DISTRIBUTED.md).

The input trace must drain the GPU at each step's end (the last GPU op of step k ends
before step k+1 starts on the CPU), as sync_bound.json.gz and launch_bound.json.gz do.

Usage (the golden fixtures, from the repository root):
  python3 tests/data/distributed/make_ranks.py tests/data/kineto/sync_bound.json.gz \
      tests/data/distributed/straggler8 --ranks 8 --straggler 5 --delay-ms 3
  python3 tests/data/distributed/make_ranks.py tests/data/kineto/sync_bound.json.gz \
      tests/data/distributed/balanced4 --ranks 4
  python3 tests/data/distributed/make_ranks.py tests/data/kineto/sync_bound.json.gz \
      tests/data/distributed/two_nodes --ranks 4 --straggler 2 --delay-ms 3 --node-offset-ms 37.5
"""
import argparse
import copy
import gzip
import json
import os

NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def steps_of(events):
    s = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
         and str(e.get("name", "")).startswith("ProfilerStep#")]
    return sorted(s, key=lambda e: e["ts"])


def warp(events, at, delta):
    """Inserts `delta` us at time `at`: later events move, events spanning it grow."""
    for e in events:
        ts = e.get("ts")
        if not isinstance(ts, (int, float)):
            continue
        if ts >= at:
            e["ts"] = ts + delta
        elif e.get("ph") == "X" and ts + e.get("dur", 0) > at:
            e["dur"] = e["dur"] + delta


def nccl(ts, dur, stream, nelems, world, corr):
    return {"ph": "X", "cat": "kernel", "name": NCCL, "pid": 0, "tid": stream, "ts": round(ts, 3),
            "dur": round(dur, 3),
            "args": {"External id": -1, "device": 0, "stream": stream, "correlation": corr,
                     "registers per thread": 96, "shared memory": 0, "blocks per SM": 0.1,
                     "grid": [16, 1, 1], "block": [640, 1, 1], "In msg nelems": nelems,
                     "Out msg nelems": nelems, "Group size": world, "dtype": "BFloat16",
                     "Collective name": "allreduce"}}


def make_rank(base, rank, a):
    d = copy.deepcopy(base)
    ev = d["traceEvents"]
    # Where torch.profiler writes it: before traceEvents (after deviceProperties).
    info = {"backend": "nccl", "rank": rank, "world_size": a.ranks}
    d = {k: v for k, v in d.items() if k != "traceEvents"} | {"distributedInfo": info, "traceEvents": d["traceEvents"]}
    steps = steps_of(ev)
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    # Plan in original times, then apply the inserts from the latest to the earliest so
    # that each lands where planned.
    plan = []  # (time, kind, step index)
    for i, s in enumerate(steps):
        nxt = steps[i + 1]["ts"] if i + 1 < len(steps) else float("inf")
        ops = [g for g in gpu if s["ts"] <= g["ts"] < nxt]
        if not ops:
            continue
        end = max(g["ts"] + g["dur"] for g in ops)
        mid = sorted(ops, key=lambda g: g["ts"])[len(ops) // 2]["ts"]
        plan.append((s["ts"] + 0.001, "late", i))
        plan.append((mid, "mid", i))
        plan.append((end, "end", i))
    jitter = lambda k: 0 if rank == a.straggler else ((rank * 7919 + k * 104729) % 20000) / 1000.0  # us
    late = a.delay_ms * 1000
    added = []
    shift_before = {}  # plan index -> total us inserted before it
    total = 0.0
    for n, (t, kind, i) in enumerate(plan):
        shift_before[n] = total
        if kind == "late" and rank == a.straggler:
            total += late
        elif kind == "end":
            total += a.end_ms * 1000 + (0 if rank == a.straggler else late if a.straggler >= 0 else 0)
    for n in reversed(range(len(plan))):
        t, kind, i = plan[n]
        if kind == "late" and rank == a.straggler:
            warp(ev, t, late)
        elif kind == "end":
            wait = late if a.straggler >= 0 and rank != a.straggler else 0
            warp(ev, t, a.end_ms * 1000 + wait)
    corr = 900000000
    for n, (t, kind, i) in enumerate(plan):
        k = 2 * i + (kind == "end")
        wait = late if a.straggler >= 0 and rank != a.straggler else 0
        start = t + shift_before[n]
        if kind == "mid":
            # Overlapped with compute on a side stream; arrivals differ as at the end.
            added.append(nccl(start + jitter(k), a.mid_ms * 1000 + wait - jitter(k), 61, a.mid_nelems, a.ranks, corr + k))
        elif kind == "end":
            added.append(nccl(start + jitter(k), a.end_ms * 1000 + wait - jitter(k), 7, a.end_nelems, a.ranks, corr + k))
    ev.extend(added)
    if a.node_offset_ms and rank >= a.ranks // 2:
        d["baseTimeNanoseconds"] = d.get("baseTimeNanoseconds", 0) + int(a.node_offset_ms * 1e6)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--straggler", type=int, default=-1)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--mid-ms", type=float, default=0.4)
    ap.add_argument("--end-ms", type=float, default=1.2)
    ap.add_argument("--mid-nelems", type=int, default=12 * 1024 * 1024)
    ap.add_argument("--end-nelems", type=int, default=6 * 1024 * 1024)
    ap.add_argument("--node-offset-ms", type=float, default=0)
    a = ap.parse_args()
    base = json.load(gzip.open(a.trace, "rt"))
    for r in range(a.ranks):
        d = make_rank(base, r, a)
        sub = "" if not a.node_offset_ms else ("node1" if r >= a.ranks // 2 else "node0")
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
        path = os.path.join(a.out, sub, f"rank{r}.json.gz")
        with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as f:
            f.write(json.dumps(d, separators=(",", ":")).encode())


if __name__ == "__main__":
    main()
