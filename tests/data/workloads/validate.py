#!/usr/bin/env python3
"""Prints the Markdown table of docs/VALIDATION.md: for every recorded fixture, chokepoint's
verdict and the main finding's estimated speedup next to the speedup the fix really gave
on the GPU (measured.json, timed without the profiler).

Usage: python3 tests/data/workloads/validate.py [path/to/chokepoint]
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "kineto")


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "build/chokepoint"
    with open(os.path.join(DATA, "expected.json")) as f:
        expected = json.load(f)
    measured = {}
    for name in ("measured.json", "measured_stack.json"):
        with open(os.path.join(DATA, name)) as f:
            measured.update(json.load(f))
    print("| fixture | expected | verdict (confidence) | findings | main finding | estimated | measured fix | est/measured |")
    print("|---|---|---|---|---|---:|---:|---:|")
    for name in sorted(expected):
        out = subprocess.run([exe, "analyze", os.path.join(DATA, name + ".json.gz"), "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
        r = json.loads(out)
        ids = ", ".join(f["id"] for f in r["findings"]) or "-"
        main = expected[name].get("main_finding")
        est = next((f["estimated_speedup"] for f in r["findings"] if f["id"] == main), None)
        real = measured.get(name, {}).get("speedup_measured")
        ratio = f"{est / real:.2f}" if est and real else "-"
        print(f"| {name} | {expected[name]['verdict']} | {r['verdict']['bound']} ({r['verdict']['confidence']:.2f}) "
              f"| {ids} | {main or '-'} | {f'{est:.2f}x' if est else '-'} "
              f"| {f'{real:.2f}x' if real and main else '-'} | {ratio} |")


if __name__ == "__main__":
    main()
