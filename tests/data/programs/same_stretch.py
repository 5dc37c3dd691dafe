#!/usr/bin/env python3
"""The step `run` counted against what the program printed for the same stretch.

Under plain `run` the step comes from short bursts of fast stack samples
(docs/RECORDING.md, "bursts"). A job whose step drifts (slower after its first
evaluation, faster once its caches are warm) is then measured over the stretches
the bursts held, not over the whole run the program's median covers. This script
sets the report's step beside both: the program's median over its run (what
VALIDATION.md's tables call "printed median") and the program's own times of the
iterations that ran inside the bursts (which needs `iter_end_unix` in the
program's --result file: common.IterTimes).

Usage: same_stretch.py REC_DIR RESULT_JSON REPORT_JSON [--json]
  REC_DIR      the recording `run -o` wrote (meta.json, pyspy-burst-N.json[.gz])
  RESULT_JSON  the program's --result file
  REPORT_JSON  `run --report F -f json`'s report of the same run

An iteration is in a burst when it started and ended within the burst's first
and last sample. The report's p50 is set against the stretch's median (a program that
logs N-iteration windows gives each iteration its window's mean, so one window holding a
warm-up lifts the stretch's mean), its mean against the printed median and the stretch's
mean. Both clocks are CLOCK_REALTIME (time.time() in the program).
"""
import gzip
import json
import os
import statistics
import sys


def load_json(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            opener = gzip.open if p.endswith(".gz") else open
            with opener(p, "rt") as f:
                return json.load(f)
    raise FileNotFoundError(path)


def burst_spans(rec):
    """(start_s, end_s) of each burst, wall clock seconds, from its samples' times."""
    meta = load_json(os.path.join(rec, "meta.json"))
    spans = []
    for b in (meta.get("stacks") or {}).get("bursts") or []:
        try:
            events = load_json(os.path.join(rec, b["file"]))
        except (FileNotFoundError, ValueError):
            continue
        if isinstance(events, dict):
            events = events.get("traceEvents", [])
        ts = [e["ts"] for e in events if isinstance(e, dict) and "ts" in e]
        if ts:
            origin = b["origin_ns"] / 1e9
            spans.append((origin + min(ts) / 1e6, origin + max(ts) / 1e6))
    return spans


def same_stretch(rec, result, report):
    spans = burst_spans(rec)
    ms = result["iter_ms"]
    ends = result.get("iter_end_unix")
    out = {"program": result.get("program"), "printed_median_ms": result.get("median_ms"),
           "bursts": len(spans)}
    steps = (report.get("window") or {}).get("step_time_ms") or {}
    out["run_mean_ms"] = steps.get("mean")
    out["run_p50_ms"] = steps.get("p50")
    out["run_steps"] = (report.get("window") or {}).get("steps")
    if ends and len(ends) == len(ms):
        evals = set(result.get("eval_iters") or [])
        inside = [m for i, (m, e) in enumerate(zip(ms, ends))
                  if i not in evals and any(s <= e - m / 1000.0 and e <= t for s, t in spans)]
        out["stretch_iterations"] = len(inside)
        if inside:
            out["stretch_median_ms"] = statistics.median(inside)
            out["stretch_mean_ms"] = statistics.fmean(inside)
    # Medians against medians for the stretch: programs that log N-iteration windows give
    # each of a window's iterations the window's mean, so a window that held a warm-up or
    # a checkpoint lifts the stretch's mean by a whole window's worth; the count leaves
    # such stretches out (the report's "longer stretches"), and its p50 is set against the
    # stretch's median. The means are compared too (error_vs_stretch_mean).
    for key, run, ref in (("error_vs_printed", "run_mean_ms", "printed_median_ms"),
                          ("error_vs_stretch", "run_p50_ms", "stretch_median_ms"),
                          ("error_vs_stretch_mean", "run_mean_ms", "stretch_mean_ms")):
        if out.get(run) and out.get(ref):
            out[key] = out[run] / out[ref] - 1
    return out


def main(argv):
    if len(argv) < 4 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    out = same_stretch(argv[1], load_json(argv[2]), load_json(argv[3]))
    if "--json" in argv[4:]:
        print(json.dumps(out))
        return 0
    def f(key, fmt="{:.2f}"):
        v = out.get(key)
        return "-" if v is None else fmt.format(v)
    print(f"{out['program']}: run counted {f('run_steps', '{}')} steps, mean {f('run_mean_ms')} ms "
          f"(p50 {f('run_p50_ms')}); printed median {f('printed_median_ms')} ms "
          f"({f('error_vs_printed', '{:+.1%}')}); the program's own {f('stretch_iterations', '{}')} "
          f"iterations inside the {out['bursts']} bursts: median {f('stretch_median_ms')} ms (p50 "
          f"{f('error_vs_stretch', '{:+.1%}')}), mean {f('stretch_mean_ms')} ms (mean "
          f"{f('error_vs_stretch_mean', '{:+.1%}')})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
