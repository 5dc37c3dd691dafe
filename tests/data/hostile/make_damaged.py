#!/usr/bin/env python3
"""Writes damaged/: real recordings and traces from the H200 (tests/data/kineto,
tests/data/live) with one kind of data lost, for issue 13 ("wrong answers from bad data").

  neg_all.json.gz       input_bound.json.gz with every kernel's duration negative
  neg_some.json.gz      healthy_bf16.json.gz with one kernel in six negative (~15% of GPU events)
  gpu_lost/             healthy_bf16 recording whose GPU stops answering NVML after the first
                        fifth of the ticks (every gpu.* value null from then on: GPU lost)
  reversed_ticks/       healthy_bf16 recording with its ticks in reverse time order
  meta_wrong_field/     healthy_bf16 recording whose meta.json has interval_ns "fast"
  no_meta/              healthy_bf16 recording without meta.json (a run killed before it)

tests/golden/damaged_golden_test.cc checks what each gives. Deterministic: run
python3 make_damaged.py (writes beside itself) and the files come out the same.
"""
import gzip
import io
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
OUT = os.path.join(HERE, "damaged")


def write_gz(path, text):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
        g.write(text.encode())
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def trace(src, out, every):
    t = json.load(gzip.open(os.path.join(DATA, "kineto", src)))
    k = 0
    for e in t["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            k += 1
            if k % every == 0:
                e["dur"] = -abs(e["dur"])
    write_gz(os.path.join(OUT, out), json.dumps(t))


def recording(name, edit_lines, meta=True, edit_meta=None):
    src = os.path.join(DATA, "live", "healthy_bf16")
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    lines = gzip.open(os.path.join(src, "samples.jsonl.gz"), "rt").read().splitlines()
    write_gz(os.path.join(d, "samples.jsonl.gz"), "\n".join(edit_lines(lines)) + "\n")
    if meta:
        m = json.load(open(os.path.join(src, "meta.json")))
        if edit_meta:
            edit_meta(m)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(m, f, indent=1)


def gpu_lost(lines):
    gpu = {json.loads(l)["id"] for l in lines if '"k":"series"' in l and '"entity":"gpu:' in l}
    ticks = sum(1 for l in lines if '"k":"tick"' in l)
    out, n = [], 0
    for l in lines:
        if '"k":"tick"' in l:
            n += 1
            if n > ticks // 5:
                j = json.loads(l)
                j["v"] = [[i, None if i in gpu else v] for i, v in j["v"]]
                l = json.dumps(j, separators=(",", ":"))
        out.append(l)
    return out


def reversed_ticks(lines):
    ticks = iter(reversed([l for l in lines if '"k":"tick"' in l]))
    return [next(ticks) if '"k":"tick"' in l else l for l in lines]


def main():
    os.makedirs(OUT, exist_ok=True)
    trace("input_bound.json.gz", "neg_all.json.gz", 1)
    trace("healthy_bf16.json.gz", "neg_some.json.gz", 6)
    recording("gpu_lost", gpu_lost)
    recording("reversed_ticks", reversed_ticks)
    recording("meta_wrong_field", lambda l: l, edit_meta=lambda m: m.update(interval_ns="fast"))
    recording("no_meta", lambda l: l, meta=False)


if __name__ == "__main__":
    main()
