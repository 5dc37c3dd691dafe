#!/usr/bin/env python3
"""Prints the Markdown table of docs/VALIDATION.md for the single-bottleneck fixtures of
tests/data/kineto/: chokepoint's verdict, its first remedy, and the what-if estimate of the
fix record.py measured (expected.json's main_remedy) next to the speedup that fix really
gave on the GPU (measured.json, timed without the profiler).

Usage: python3 tests/data/workloads/validate.py [path/to/chokepoint]
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "kineto")


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "build/chokepoint"
    with open(os.path.join(DATA, "expected.json")) as f:
        expected = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    measured = {}
    for name in ("measured.json", "measured_stack.json"):
        with open(os.path.join(DATA, name)) as f:
            measured.update(json.load(f))
    print("| fixture | expected | verdict (confidence) | findings | first remedy | fix measured | its what-if | measured | est/measured |")
    print("|---|---|---|---|---|---|---:|---:|---:|")
    errors = []
    for name in sorted(expected):
        # Published ceilings only: a saved bench profile must not move the figures.
        out = subprocess.run([exe, "analyze", "--no-saved-profile", "-q", os.path.join(DATA, name + ".json.gz"),
                              "--format", "json"], capture_output=True, text=True, check=True).stdout
        r = json.loads(out)
        ids = ", ".join(f["id"] for f in r["findings"]) or "-"
        first = r["remedies"][0]["id"] if r.get("remedies") else "-"
        fix = expected[name].get("main_remedy")
        est = next((w["estimated_speedup"] for w in r.get("what_ifs", []) if w["id"] == fix), None)
        real = measured.get(name, {}).get("speedup_measured") if fix else None
        ratio = f"{est / real:.2f}" if est and real else "-"
        if est and real:
            errors.append(abs(est / real - 1))
        print(f"| {name} | {expected[name]['verdict']} | {r['verdict']['bound']} ({r['verdict']['confidence']:.2f}) "
              f"| {ids} | {first} | {fix or '-'} | {f'{est:.2f}x' if est else '-'} "
              f"| {f'{real:.2f}x' if real else '-'} | {ratio} |")
    if errors:
        print(f"\n{len(errors)} estimates: median error {100 * statistics.median(errors):.0f}%, "
              f"largest {100 * max(errors):.0f}%")


if __name__ == "__main__":
    main()
