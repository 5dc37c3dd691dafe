#!/usr/bin/env python3
"""Time HolisticTraceAnalysis (HTA) on a Kineto trace: load, temporal breakdown and
idle-time breakdown, and report peak RSS.

    benchmarks/.venv/bin/python benchmarks/hta_bench.py TRACE_DIR [--json]

TRACE_DIR is a directory of rank traces as HTA wants it (every *.json / *.json.gz in it
is a rank; HTA takes the rank from the first line matching `"rank": N`, which Kineto
writes in `distributedInfo`; make_trace.py --rank 0 adds it). A single trace file is
accepted too: it is linked into a temporary directory.

HTA is installed by benchmarks/setup_hta.sh into benchmarks/.venv (PyPI `traceinsight`,
formerly `HolisticTraceAnalysis`; it imports as `hta`). HTA's default parser backend
(json.loads of the whole file into pandas) is used, as a user gets it out of the box.
"""

import argparse
import json
import logging
import os
import resource
import shutil
import sys
import tempfile
import time


def vm_hwm_mib():
    """Peak RSS so far of this process (VmHWM), MiB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace_dir", help="directory of rank traces (or one trace file)")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--verbose", action="store_true", help="keep HTA's own log output")
    args = ap.parse_args()

    tmp = None
    trace_dir = args.trace_dir
    if os.path.isfile(trace_dir):
        tmp = tempfile.mkdtemp(prefix="hta_bench_")
        name = os.path.basename(trace_dir)
        os.symlink(os.path.abspath(trace_dir), os.path.join(tmp, name))
        trace_dir = tmp
    files = [f for f in sorted(os.listdir(trace_dir)) if f.endswith((".json", ".gz"))]
    input_bytes = sum(os.path.getsize(os.path.join(trace_dir, f)) for f in files)

    t0 = time.perf_counter()
    from hta.trace_analysis import TraceAnalysis  # noqa: E402  (import timed apart)
    if not args.verbose:
        logging.getLogger("hta").setLevel(logging.ERROR)
    try:
        from hta.version import __version__ as hta_version
    except ImportError:
        hta_version = "?"
    t_import = time.perf_counter() - t0

    t0 = time.perf_counter()
    analyzer = TraceAnalysis(trace_dir=trace_dir)
    t_load = time.perf_counter() - t0
    rss_load = vm_hwm_mib()

    t0 = time.perf_counter()
    temporal = analyzer.get_temporal_breakdown(visualize=False)
    t_temporal = time.perf_counter() - t0

    t0 = time.perf_counter()
    idle = analyzer.get_idle_time_breakdown(visualize=False)
    t_idle = time.perf_counter() - t0
    idle_df = idle[0] if isinstance(idle, tuple) else idle

    ru_self = resource.getrusage(resource.RUSAGE_SELF)
    ru_child = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mib = ru_self.ru_maxrss / 1024
    peak_child_mib = ru_child.ru_maxrss / 1024
    ranks = sorted(analyzer.t.traces.keys()) if hasattr(analyzer.t, "traces") else []
    n_events = sum(len(df) for df in analyzer.t.traces.values()) if ranks else None

    result = {
        "tool": "hta",
        "hta_version": hta_version,
        "trace_dir": os.path.abspath(args.trace_dir),
        "files": files,
        "input_bytes": input_bytes,
        "ranks": ranks,
        "events_loaded": n_events,
        "import_s": round(t_import, 3),
        "load_s": round(t_load, 3),
        "temporal_breakdown_s": round(t_temporal, 3),
        "idle_time_breakdown_s": round(t_idle, 3),
        "analysis_s": round(t_temporal + t_idle, 3),
        "total_s": round(t_load + t_temporal + t_idle, 3),
        "peak_rss_after_load_mib": round(rss_load, 1),
        "peak_rss_mib": round(peak_mib, 1),
        "peak_rss_children_mib": round(peak_child_mib, 1),
    }
    if args.json:
        print(json.dumps(result))
    else:
        import pandas as pd
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print("temporal breakdown:\n", temporal, "\n", sep="")
            print("idle time breakdown:\n", idle_df, "\n", sep="")
        mb = input_bytes / 1e6
        print(f"HTA {hta_version} on {args.trace_dir}: {len(files)} file(s), {mb:.1f} MB, "
              f"{n_events} events loaded")
        print(f"  import      {t_import:8.2f} s")
        print(f"  load        {t_load:8.2f} s   (peak RSS so far {rss_load:.0f} MiB)")
        print(f"  temporal    {t_temporal:8.2f} s")
        print(f"  idle time   {t_idle:8.2f} s")
        print(f"  load+analysis {t_load + t_temporal + t_idle:6.2f} s   "
              f"({mb / (t_load + t_temporal + t_idle):.1f} MB/s)")
        print(f"  peak RSS    {peak_mib:8.0f} MiB (children {peak_child_mib:.0f} MiB)")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
