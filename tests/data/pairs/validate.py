#!/usr/bin/env python3
"""The validation table of docs/VALIDATION.md ("What-ifs against real fixes"): chokepoint's
estimate of each pair's fix, from each source, against the gain the fix gave on the H200.

    python3 tests/data/pairs/validate.py build/chokepoint [--json OUT.json]

Sources, per pair directory (recorded by record_pairs.sh / gpu_round2.sh):
  trace     trace.json.gz   torch.profiler, 4 steps of the broken variant (round A)
  rerun     rerun.json.gz   the same taken again later (round C; three pairs)
  round_d   round_d.json.gz the trace of one interleaved round (gpu_interleaved.sh), against
                            that round's fix (measured.json round_d; interleaved.py has all)
  traced    traced.rec/     `chokepoint run --trace` of the broken variant (CUPTI)
  run       run.rec/        `chokepoint run` of the broken variant (live samples)
Measured gain (measured.json): round A, the broken variant's median time per iteration
from the process that recorded trace.json.gz (timed just before profiling) against the
fixed variant's, timed in the next process; for the rerun source, the rerun process's
own time against round C's fixed variant. round C (interleaved rounds) is shown as the
spread the machine's host speed gives. resnet_workers is measured by its mean time
(its 4 workers deliver batches in bursts: the median of 100 ms blocks misses the waits).
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = [("trace", "trace.json.gz"), ("rerun", "rerun.json.gz"), ("round_d", "round_d.json.gz"),
           ("traced", "traced.rec"), ("run", "run.rec")]


def analyze(cp, path):
    p = subprocess.run([cp, "analyze", path, "-f", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{path}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def estimate(report, remedy):
    return estimate_and_range(report, remedy)[0]


def estimate_and_range(report, remedy):
    """The estimate, and its [low, high] where the report gives a range (a CUPTI trace's
    estimate moved 5% or more by the tracer's cost per call), else None."""
    for w in report.get("what_ifs", []) + report.get("remedies", []):
        if w["id"] == remedy and w.get("estimated_speedup"):
            return w["estimated_speedup"], w.get("estimated_speedup_range")
    return None, None


def range_error(rng, meas):
    """How far the measured gain lies outside a range, relative to the nearer end (0 inside)."""
    lo, hi = rng
    return 0.0 if lo <= meas <= hi else min(abs(lo / meas - 1), abs(hi / meas - 1))


def measured(m, exp, source):
    a = m["round_a"]
    if source == "round_d":
        return m.get("round_d", {}).get("measured")
    if source == "rerun":
        return m["rerun"]["samples_per_s"] and m["round_c"]["fixed"]["samples_per_s_median_of_rounds"] / m["rerun"]["samples_per_s"]
    if exp.get("measure") == "round_c_mean":
        return m["round_c"]["speedup_fixed_mean"]
    return a["fixed"]["samples_per_s"] / a["broken"]["samples_per_s"]


def main():
    cp = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/chokepoint")
    out_json = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    expected = json.load(open(os.path.join(HERE, "expected.json")))
    rows, errors, checks = [], {s: [] for s, _ in SOURCES}, []
    range_errors = {s: [] for s, _ in SOURCES}
    for name in sorted(k for k in expected if not k.startswith("_")):
        exp = expected[name]
        d = os.path.join(HERE, name)
        m = json.load(open(os.path.join(d, "measured.json")))
        remedy = exp.get("remedy")
        row = {"pair": name, "remedy": remedy, "sources": {}}
        if remedy and "fixed" in m["round_a"]:
            row["measured_a"] = measured(m, {}, "trace")
        if "round_c" in m and "speedup_fixed" in m["round_c"]:
            row["measured_c"] = m["round_c"]["speedup_fixed"]
            row["measured_c_mean"] = m["round_c"].get("speedup_fixed_mean")
        if remedy:
            row["measured"] = measured(m, exp, "trace")
        for source, file in SOURCES:
            path = os.path.join(d, file)
            if not os.path.exists(path):
                continue
            r = analyze(cp, path)
            est, rng = estimate_and_range(r, remedy) if remedy else (None, None)
            meas = measured(m, exp, source) if remedy and (source != "rerun" or "rerun" in m) else None
            s = {"verdict": r["verdict"]["bound"], "confidence": r["verdict"]["confidence"],
                 "first_remedy": r["remedies"][0]["id"] if r["remedies"] else None,
                 "first_gain": r["remedies"][0].get("estimated_speedup") if r["remedies"] else None,
                 "findings": [f["id"] for f in r["findings"]], "estimate": est, "measured": meas}
            if est and meas:
                s["ratio"] = est / meas
                errors[source].append(abs(est / meas - 1))
                range_errors[source].append(range_error(rng, meas) if rng else abs(est / meas - 1))
            if rng:
                s["range"] = rng
            row["sources"][source] = s
            want = exp.get("verdict", {}).get(source)
            if want:
                checks.append((f"{name}/{source} verdict {s['verdict']}", s["verdict"] == want))
        rows.append(row)

    print("| pair | fix | measured (round A) | round C | torch.profiler | run --trace | run (samples) | verdicts (profiler / trace / samples) | first remedy |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for row in rows:
        def cell(src):
            s = row["sources"].get(src)
            if not s or not s.get("estimate"):
                return "-"
            if s.get("range"):
                lo, hi = s["range"]
                ratios = f" ({lo / s['measured']:.2f}-{hi / s['measured']:.2f})" if "ratio" in s else ""
                return f"{lo:.2f}-{hi:.2f}x{ratios}"
            return f"{s['estimate']:.2f}x ({s['ratio']:.2f})" if "ratio" in s else f"{s['estimate']:.2f}x"
        verdicts = " / ".join(row["sources"].get(s, {}).get("verdict", "-") for s in ("trace", "traced", "run"))
        first = row["sources"].get("trace", row["sources"].get("traced", {})).get("first_remedy") or "-"
        mc = f"{row['measured_c']:.2f}x" if "measured_c" in row else "-"
        if row.get("measured_c_mean") and row["pair"] == "resnet_workers":
            mc = f"{row['measured_c']:.2f}x median, {row['measured_c_mean']:.2f}x mean"
        ma = f"{row['measured_a']:.2f}x" if "measured_a" in row else "-"
        print(f"| {row['pair']} | {row['remedy'] or '-'} | {ma} | {mc} | {cell('trace')} | {cell('traced')} | "
              f"{cell('run')} | {verdicts} | {first} |")
    reruns = [r for r in rows if "rerun" in r["sources"] and r["sources"]["rerun"].get("ratio")]
    if reruns:
        print("\nSecond torch.profiler trace (round C), against the same session's measurements:\n")
        for r in reruns:
            s = r["sources"]["rerun"]
            print(f"- {r['pair']}: {r['remedy']} estimated {s['estimate']:.2f}x, measured {s['measured']:.2f}x "
                  f"(ratio {s['ratio']:.2f}); first remedy {s['first_remedy']} {s['first_gain']:.2f}x")
    inter = [(r["pair"], json.load(open(os.path.join(HERE, r["pair"], "measured.json"))).get("round_d")) for r in rows]
    inter = [(n, d) for n, d in inter if d]
    if inter:
        print("\nInterleaved rounds (round D, gpu_interleaved.sh): each round's estimate (computed by interleaved.py when recorded)"
              " against the same round's fix:\n")
        for n, d in inter:
            for src in ("trace", "traced"):
                rs = [x for x in d["rounds"] if src + "_ratio" in x]
                if rs:
                    med = statistics.median(x[src + "_ratio"] for x in rs)
                    each = ", ".join(f"{x[src + '_estimate']:.2f}x/{x['measured']:.2f}x" for x in rs)
                    print(f"- {n} ({src}): median ratio {med:.2f} over {len(rs)} rounds ({each})")
    print()
    for source, e in errors.items():
        if e:
            print(f"- {source}: {len(e)} estimates, median error {100 * statistics.median(e):.0f}%, "
                  f"largest {100 * max(e):.0f}%")
            re = range_errors[source]
            if re != e:
                print(f"  (the estimates that are ranges judged by the measured gain's distance outside them: "
                      f"median {100 * statistics.median(re):.0f}%, largest {100 * max(re):.0f}%)")
    failed = [c for c, ok in checks if not ok]
    print(f"- verdicts: {len(checks) - len(failed)} of {len(checks)} as expected" +
          (": " + ", ".join(failed) if failed else ""))
    if out_json:
        with open(out_json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
