#!/usr/bin/env python3
"""Check a trace made by make_trace.py against its source.

    python3 benchmarks/check_trace.py --from tests/data/kineto/healthy_bf16.json.gz /tmp/big100.json

Loads both with json.load (so keep the output to a few hundred MB) and checks:
  - the output parses, has the source's top-level members in the source's order
    (plus distributedInfo if added), and traceEvents last-but-one as in the source;
  - ids are unique where Kineto makes them unique: correlation of runtime/driver calls
    and of GPU ops, External id of cpu_op/user_annotation, ac2g and fwdbwd flow ids
    (one `s` and one `f` per id), ProfilerStep#N numbers;
  - links are consistent: the number of GPU ops whose correlation finds a runtime
    call, of those whose External id matches that call's, of ac2g s/f pairs that land
    on the runtime call / GPU op with the same id and ts, is the source's count times
    the number of copies;
  - GPU ops on one stream overlap only as often as in the source times the copies
    (copies are disjoint in time) and ProfilerStep windows follow each other.
Exits non-zero on a failed check.
"""

import argparse
import collections
import gzip
import json
import sys

GPU_OPS = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME = ("cuda_runtime", "cuda_driver")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.load(f, object_pairs_hook=collections.OrderedDict)


def stats(trace):
    ev = trace["traceEvents"]
    s = collections.Counter()
    dup = collections.Counter()
    rt = {}
    gpu = {}
    seen = collections.defaultdict(set)

    def uniq(space, v):
        if v in seen[space]:
            dup[space] += 1
        seen[space].add(v)

    flows = collections.defaultdict(dict)
    for e in ev:
        cat = e.get("cat")
        a = e.get("args", {})
        if cat in RUNTIME and "correlation" in a:
            uniq("runtime correlation", a["correlation"])
            rt[a["correlation"]] = e
        elif cat in GPU_OPS:
            s["gpu ops"] += 1
            uniq("gpu op correlation", a.get("correlation"))
            gpu[a.get("correlation")] = e
        elif cat in ("cpu_op", "user_annotation") and "External id" in a:
            uniq("cpu External id", a["External id"])
        if e.get("ph") in ("s", "f") and "id" in e:
            uniq(f"{cat} {e['ph']} id", e["id"])
            flows[(cat, e["ph"])][e["id"]] = e
        if cat == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"):
            uniq("ProfilerStep#", e["name"])
            s["profiler steps"] += 1
    for c, g in gpu.items():
        r = rt.get(c)
        if r is None:
            s["gpu ops without launch call"] += 1
        else:
            s["gpu op -> runtime call"] += 1
            if r["args"].get("External id") == g["args"].get("External id"):
                s["gpu op External id == runtime call's"] += 1
    for i, f in flows[("ac2g", "s")].items():
        r = rt.get(i)
        if r is not None and r["ts"] == f["ts"] and r["tid"] == f["tid"]:
            s["ac2g s on runtime call"] += 1
    for i, f in flows[("ac2g", "f")].items():
        g = gpu.get(i)
        if g is not None and g["ts"] == f["ts"]:
            s["ac2g f on gpu op"] += 1
            if i not in rt:
                s["ac2g f on gpu op without launch call"] += 1
        if i in flows[("ac2g", "s")]:
            s["ac2g s/f pairs"] += 1
    for i in flows[("fwdbwd", "f")]:
        if i in flows[("fwdbwd", "s")]:
            s["fwdbwd s/f pairs"] += 1
    # Overlap of GPU ops on one stream.
    by_stream = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") in GPU_OPS:
            by_stream[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for iv in by_stream.values():
        iv.sort()
        end = None
        for a, b in iv:
            if end is not None and a < end - 1e-3:
                s["gpu op overlaps on a stream"] += 1
            end = b if end is None else max(end, b)
    steps = sorted((e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1])) for e in ev
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    for (a0, a1, n0), (b0, b1, n1) in zip(steps, steps[1:]):
        if b0 < a1 - 1e-3:
            s["ProfilerStep overlaps"] += 1
        if n1 != n0 + 1:
            s["ProfilerStep numbers not consecutive"] += 1
    return s, dup, len(ev)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="src", required=True)
    ap.add_argument("trace")
    ap.add_argument("--orphans", choices=("each", "once"), default="each",
                    help="as given to make_trace.py")
    args = ap.parse_args()
    src = load(args.src)
    out = load(args.trace)
    ok = True

    sk = [k for k in src.keys()]
    ok_keys = [k for k in out.keys() if k != "distributedInfo"]
    print(f"top-level members: {list(out.keys())}")
    if ok_keys != sk:
        print(f"FAIL: members differ from source {sk}")
        ok = False

    s_src, dup_src, n_src = stats(src)
    s_out, dup_out, n_out = stats(out)
    copies = s_out["profiler steps"] / max(1, s_src["profiler steps"])
    print(f"events: source {n_src}, output {n_out}; copies (by profiler steps): {copies:g}")
    if copies != int(copies):
        print("FAIL: profiler step count is not a multiple of the source's")
        ok = False
    copies = int(copies)
    for space in sorted(set(dup_src) | set(dup_out) | {"runtime correlation", "gpu op correlation",
                                                        "cpu External id", "ac2g s id",
                                                        "ac2g f id", "fwdbwd s id", "fwdbwd f id",
                                                        "ProfilerStep#"}):
        want = dup_src[space] * copies
        got = dup_out[space]
        flag = "ok" if got == want else "FAIL"
        ok &= got == want
        print(f"  {flag:4} duplicate {space}: {got} (source {dup_src[space]})")
    for key in sorted(set(s_src) | set(s_out)):
        if key in ("ProfilerStep overlaps", "ProfilerStep numbers not consecutive"):
            want = s_src[key]
        elif args.orphans == "once" and key in ("gpu ops", "ac2g f on gpu op"):
            orphan_key = {"gpu ops": "gpu ops without launch call",
                          "ac2g f on gpu op": "ac2g f on gpu op without launch call"}[key]
            want = (s_src[key] - s_src[orphan_key]) * copies + s_src[orphan_key]
        elif args.orphans == "once" and "without launch call" in key:
            want = s_src[key]
        else:
            want = s_src[key] * copies
        got = s_out[key]
        flag = "ok" if got == want else "FAIL"
        ok &= got == want
        print(f"  {flag:4} {key}: {got} (want {want}, source {s_src[key]})")
    print("PASS" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
