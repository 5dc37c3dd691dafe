#!/usr/bin/env python3
"""Round D of docs/VALIDATION.md: each round's estimates against the same round's fix.

    python3 tests/data/pairs/interleaved.py BIN/chokepoint DIR [--json OUT.json]

DIR is remeasure.py's output of gpu_interleaved.sh (PAIR.profiled.rN.json[.gz], the broken
variant timed then profiled in one process; PAIR.fixed.rN.json, the fix timed in the next
process; PAIR.traced.rN.rec, the broken variant under `chokepoint run --trace`). For each
round: measured = the fix's samples/s over the profiled process's (by mean time where
expected.json says round_c_mean: resnet_workers' bursty loader), and the estimate of the
pair's remedy from that round's trace and recording. Prints one line per pair and round and
the median ratio per pair and source.

`--alt PAIR=VARIANT:REMEDY` sets another fix against another remedy (gpu_first_remedy.sh: a
first remedy that is not the pair's own fix, e.g. adamw_fused=wholegraph:cuda-graphs reads
adamw_fused.wholegraph.rN.json against the cuda-graphs estimate); only those pairs are read.
"""
import glob
import json
import os
import re
import statistics
import sys

from validate import analyze, estimate_and_range

HERE = os.path.dirname(os.path.abspath(__file__))


def estimate(cp, path, remedy):
    report = analyze(cp, path)
    est, rng = estimate_and_range(report, remedy)
    return est, rng, report


def main():
    cp = os.path.abspath(sys.argv[1])
    d = sys.argv[2]
    out_json = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    alt = {}
    for i, a in enumerate(sys.argv):
        if a == "--alt":
            pair, rest = sys.argv[i + 1].split("=")
            alt[pair] = tuple(rest.split(":"))
    expected = json.load(open(os.path.join(HERE, "expected.json")))
    pairs = sorted({re.match(r"(.*)\.profiled\.r\d+\.json$", os.path.basename(f)).group(1)
                    for f in glob.glob(os.path.join(d, "*.profiled.r*.json"))})
    if alt:
        pairs = [p for p in pairs if p in alt]
    result = {}
    for name in pairs:
        exp = dict(expected[name])
        variant = "fixed"
        if name in alt:
            variant, exp["remedy"] = alt[name]
        key = "samples_per_s_mean" if exp.get("measure") == "round_c_mean" else "samples_per_s"
        rows = []
        for f in sorted(glob.glob(os.path.join(d, f"{name}.profiled.r*.json"))):
            r = re.search(r"\.r(\d+)\.json$", f).group(1)
            fixed = os.path.join(d, f"{name}.{variant}.r{r}.json")
            if not os.path.exists(fixed):
                continue
            broken = json.load(open(f))
            meas = json.load(open(fixed))[key] / broken[key]
            row = {"round": int(r), "measured": meas, "broken_ms": broken["median_ms"], "broken_mean_ms": broken["mean_ms"]}
            for source, path in (("trace", f[:-5] + ".json.gz"), ("traced", os.path.join(d, f"{name}.traced.r{r}.rec"))):
                if os.path.exists(path):
                    est, rng, rep = estimate(cp, path, exp["remedy"])
                    row[source] = {"estimate": est, "ratio": est / meas if est else None,
                                   "verdict": rep["verdict"]["bound"],
                                   "first_remedy": rep["remedies"][0]["id"] if rep["remedies"] else None}
                    if rng:  # the tracer's cost per call leaves a range (validate.py)
                        row[source]["range"] = rng
                        row[source]["range_ratios"] = [rng[0] / meas, rng[1] / meas]
            rows.append(row)
            def cell(s):
                x = row[s]
                if x.get("range"):
                    (lo, hi), (rlo, rhi) = x["range"], x["range_ratios"]
                    figure = f"{lo:.2f}-{hi:.2f}x ({rlo:.2f}-{rhi:.2f})"
                else:
                    figure = f"{x['estimate']:.2f}x ({x['ratio']:.2f})"
                return f"{s} {figure}, {x['verdict']}, first {x['first_remedy']}"
            cells = "; ".join(cell(s) for s in ("trace", "traced") if s in row and row[s]["estimate"])
            print(f"{name} r{r}: measured {meas:.2f}x (broken {broken['median_ms']:.2f} ms median, "
                  f"{broken['mean_ms']:.2f} mean); {cells}")
        summary = {}
        for s in ("trace", "traced"):
            ratios = [x[s]["ratio"] for x in rows if s in x and x[s]["ratio"]]
            if ratios:
                summary[s] = {"median_ratio": statistics.median(ratios), "ratios": ratios}
                print(f"{name} {s}: median ratio {statistics.median(ratios):.2f} over {len(ratios)} rounds "
                      f"({', '.join(f'{x:.2f}' for x in ratios)})")
                lows = [min(x[s]["range_ratios"]) for x in rows if s in x and x[s].get("range_ratios")]
                if lows:
                    summary[s]["low_end_ratios"] = lows
                    print(f"{name} {s}: the ranges' low ends {', '.join(f'{x:.2f}' for x in lows)} of the measured gain")
        result[name] = {"rounds": rows, "summary": summary}
    if out_json:
        with open(out_json, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
