#!/usr/bin/env python3
"""The validation table of one interleaved round set (docs/VALIDATION.md, round F).

    python3 tests/data/pairs/round_table.py OUT/f1.json OUT/f2.json [--alt OUT/f1.alt.json]

Reads interleaved.py's --json files (per pair and round: the fix's measured gain and each
source's estimate of the pair's remedy from the same round's trace and recording) and prints
a Markdown table, one row per pair and source: each round's estimate / measured, the median
over rounds of estimate over measured, and the error, |median ratio - 1|; for an estimate
that is a range (a CUPTI trace whose cost per call moves it, validate.py) the error is also
given as the distance outside the range. Then per source, over the pairs' own fixes (not
the --alt ones): how many estimates, the median error and the largest, against the targets
of issue 10 (median <= 15%, none over 25%).
"""
import json
import statistics
import sys

SOURCES = (("trace", "torch.profiler"), ("traced", "`run --trace`"))


def outside(rng_ratios):
    lo, hi = min(rng_ratios), max(rng_ratios)
    return 0.0 if lo <= 1.0 <= hi else min(abs(lo - 1.0), abs(hi - 1.0))


def main():
    args = sys.argv[1:]
    files, alts = [], []
    i = 0
    while i < len(args):
        if args[i] == "--alt":
            alts.append(args[i + 1])
            i += 2
        else:
            files.append(args[i])
            i += 1
    pairs = {}
    for path in files:
        pairs.update(json.load(open(path)))
    for path in alts:
        for name, v in json.load(open(path)).items():
            pairs[f"{name} (alt)"] = v
    print("| pair | source | rounds: estimate / measured | median ratio | error | outside the range |")
    print("|---|---|---|---:|---:|---:|")
    errors = {s: [] for s, _ in SOURCES}
    range_errors = {s: [] for s, _ in SOURCES}
    for name in sorted(pairs):
        rows = pairs[name]["rounds"]
        for s, label in SOURCES:
            got = [r for r in rows if s in r and r[s].get("estimate") and r[s].get("ratio")]
            if not got:
                continue
            cells = []
            for r in got:
                x = r[s]
                fig = (f"{x['range'][0]:.2f}-{x['range'][1]:.2f}x" if x.get("range") else f"{x['estimate']:.2f}x")
                cells.append(f"{fig} / {r['measured']:.2f}x")
            med = statistics.median(r[s]["ratio"] for r in got)
            err = abs(med - 1.0)
            own = not name.endswith("(alt)")  # the summary is of the pairs' own fixes
            if own:
                errors[s].append((err, name))
            ranged = [r for r in got if r[s].get("range_ratios")]
            if ranged:
                rerr = statistics.median(outside(r[s]["range_ratios"]) if r[s].get("range_ratios")
                                         else abs(r[s]["ratio"] - 1.0) for r in got)
                rcell = f"{100 * rerr:.0f}%"
            else:
                rerr = err
                rcell = "-"
            if own:
                range_errors[s].append((rerr, name))
            print(f"| {name} | {label} | {'; '.join(cells)} | {med:.2f} | {100 * err:.0f}% | {rcell} |")
    print()
    print("| source | estimates of the pairs' own fixes | median error | largest |")
    print("|---|---:|---:|---:|")
    for s, label in SOURCES:
        for what, errs in (("", errors[s]), (", ranges judged by the distance outside them", range_errors[s])):
            if not errs or (what and errs == errors[s]):
                continue
            worst = max(errs)
            print(f"| {label}{what} | {len(errs)} | {100 * statistics.median(e for e, _ in errs):.1f}% | "
                  f"{100 * worst[0]:.0f}% ({worst[1]}) |")


if __name__ == "__main__":
    main()
