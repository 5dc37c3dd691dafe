#!/usr/bin/env python3
"""What py-spy's sampling costs a training job's step, measured inside one process.

Between processes the GPU machine's step time moves more than the cost being measured
(docs/BENCHMARKS.md: 10% run to run on gpt_char, and the VM's host speed has moved 2x
between processes). So one process of the program runs long, and py-spy is attached
and detached in turn, each for PERIOD seconds, with the same options `chokepoint run`
gives it (src/sampler/pyspy/pyspy_recorder.cc: chrometrace, --idle --threads
--nonblocking). The program's own per-iteration times and end stamps (--result,
common.IterTimes) say which iterations ran with py-spy attached and which without;
each "on" window is set against the mean of the "off" windows beside it, and the
median of those ratios is the cost. py-spy's CPU is its children's rusage over its
wall time.

Usage: pyspy_cost.py OUT_JSON RATE[,RATE...] PERIOD WARMUP PROGRAM.py [ARG...]
  e.g. pyspy_cost.py out/cost.json 20,500 4 25 gpt_char.py --iters 6000
The windows go round (off, RATE1, off, RATE2, ...) until the program exits; 0.3 s at
each edge of a window is left out (attaching, and the last log window's spill).
A RATE of 0 is a sham window: nothing is attached, but it is set against its neighbours
like the others, so its spread is what the method reads where there is no cost at all.
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EDGE_S = 0.3


def main(argv):
    if len(argv) < 6 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    out_json, rates, period, warmup = argv[1], [int(r) for r in argv[2].split(",")], float(argv[3]), float(argv[4])
    prog = argv[5:]
    pyspy = os.environ.get("CHOKEPOINT_PY_SPY") or shutil.which("py-spy")
    if not pyspy:
        print("pyspy_cost.py: py-spy not found (PATH or CHOKEPOINT_PY_SPY)", file=sys.stderr)
        return 1
    here = os.path.dirname(os.path.abspath(__file__))
    tmp = tempfile.mkdtemp(prefix="pyspy_cost.")
    result = os.path.join(tmp, "result.json")
    job = subprocess.Popen([sys.executable, prog[0], *prog[1:], "--result", result], cwd=here,
                           stdout=open(os.path.join(tmp, "out.txt"), "w"), stderr=subprocess.STDOUT)
    time.sleep(warmup)
    windows = []  # (rate, 0 sham or None off; start, end, py-spy cpu s)
    k = 0
    while job.poll() is None:
        rate = None if k % 2 == 0 else rates[(k // 2) % len(rates)]
        k += 1
        t0 = time.time()
        if not rate:
            end = t0 + period
            while time.time() < end and job.poll() is None:
                time.sleep(0.05)
            windows.append((rate, t0, time.time(), 0.0))
            continue
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        spy = subprocess.run([pyspy, "record", "--pid", str(job.pid), "--format", "chrometrace", "--rate", str(rate),
                              "--idle", "--threads", "--nonblocking", "--duration", str(int(period)),
                              "--output", os.path.join(tmp, f"spy{k}.json")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        windows.append((rate, t0, time.time(), cpu if spy.returncode == 0 else -1.0))
    job.wait()
    try:
        res = json.load(open(result))
    except (OSError, ValueError) as e:
        print(f"pyspy_cost.py: no result from the program ({e}); its output: {tmp}/out.txt", file=sys.stderr)
        return 1
    ms, ends = res["iter_ms"], res["iter_end_unix"]
    evals = set(res.get("eval_iters") or [])
    evals |= {i + 1 for i in evals}

    def inside(w):
        _, s, e, _ = w
        return [m for i, (m, t) in enumerate(zip(ms, ends))
                if i not in evals and s + EDGE_S <= t - m / 1000 and t <= e - EDGE_S]

    per = []
    for i, w in enumerate(windows):
        if w[0] is None or w[3] < 0:
            continue
        on = inside(w)
        offs = [inside(windows[j]) for j in (i - 1, i + 1) if 0 <= j < len(windows) and windows[j][0] is None]
        offs = [statistics.median(o) for o in offs if len(o) >= 5]
        if len(on) < 5 or not offs:
            continue
        per.append({"rate_hz": w[0], "on_ms": statistics.median(on), "off_ms": statistics.fmean(offs),
                    "iterations": len(on), "pyspy_cpu_share": w[3] / (w[2] - w[1])})
    summary = {}
    for rate in rates:
        rows = [p for p in per if p["rate_hz"] == rate]
        if rows:
            ratios = [p["on_ms"] / p["off_ms"] for p in rows]
            summary[str(rate)] = {"windows": len(rows), "cost_median": statistics.median(ratios) - 1,
                                  "cost_mean": statistics.fmean(ratios) - 1,
                                  "cost_se": statistics.stdev(ratios) / len(ratios) ** 0.5 if len(ratios) > 1 else 0,
                                  "cost_min": min(ratios) - 1, "cost_max": max(ratios) - 1,
                                  "pyspy_cpu_share": statistics.median(p["pyspy_cpu_share"] for p in rows)}
    doc = {"program": res.get("program"), "args": prog, "period_s": period, "device": res.get("device"),
           "printed_median_ms": res.get("median_ms"), "summary": summary, "windows": per}
    with open(out_json, "w") as f:
        json.dump(doc, f, indent=1)
    for rate, s in summary.items():
        what = "with nothing attached (sham)" if rate == "0" else "with py-spy attached"
        print(f"{res.get('program')} at {rate} Hz: step {s['cost_median']:+.1%} {what} "
              f"(median of {s['windows']} windows; mean {s['cost_mean']:+.1%} +- {s['cost_se']:.1%} s.e.; "
              f"{s['cost_min']:+.1%} to {s['cost_max']:+.1%}), py-spy {s['pyspy_cpu_share']:.1%} of one core")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
