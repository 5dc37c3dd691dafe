#!/usr/bin/env python3
"""Make a large, realistic Kineto (PyTorch profiler) trace by replicating a recorded one.

    python3 benchmarks/make_trace.py --from tests/data/kineto/healthy_bf16.json.gz \
        --size 100MB --out /tmp/big100.json        # or .json.gz; also --size 1GB

The recorded window (every event except the metadata `M` events, the profiler's
`Trace` span and the global `"s": "g"` instants) is one repetition unit. The unit is
written N times, copy k shifted in time by k * P, where P is the unit's span (first
event start to last event end, CPU and GPU together) rounded up to whole microseconds
plus --gap-us. So copies never overlap on any thread or stream and the ProfilerStep
windows follow each other. In copy k:
  - `ProfilerStep#N` (user_annotation and gpu_user_annotation) becomes N + k * steps,
  - `correlation` and the ac2g flow `id` (Kineto uses the correlation id as the flow id),
    `External id`, other flow ids (fwdbwd, per `cat`), `Sequence number`, `Ev Idx`,
    `Python id` / `Python parent id` are shifted by k * (range of that id in the unit),
    so they stay unique and the CPU op / runtime call / GPU op / flow links stay
    consistent within each copy. Id value 0 ("none") is left as is.
The metadata events are written once; the `Trace` span is stretched to cover all
copies and instants after the unit (`Record Window End`) move to the end.
GPU ops whose launching call is not in the source (in healthy_bf16: 125 ops, 15 ms of
GPU time, launched before the recording window) are repeated in every copy by default,
so the GPU stays as busy as in the source; --orphans once writes them in the first copy
only (then every later copy has no GPU op without its launch, and a GPU gap instead).

The output is produced by text templating of the source's own event text: formatting
(indentation, key order, `"ts": 5105435920172.273` with the source's decimals) and the
order of the top-level members (wherever baseTimeNanoseconds sits in the source) are
kept byte for byte. Timestamps are shifted on their integer microsecond part only, so
the decimals are exact (no float rounding). --size counts the uncompressed JSON bytes
(KB/MB/GB are powers of 1000, KiB/MiB/GiB powers of 1024). An output ending in .gz is
gzip-compressed (--gzip-level, default 1 for speed).

--rank R adds `"distributedInfo": {"backend": "nccl", "rank": R, "world_size": W}`
after deviceProperties (HolisticTraceAnalysis needs a rank in each file of its trace
directory; it scans lines for `"rank": N`).
"""

import argparse
import gzip
import json
import math
import re
import sys
import time

STEP_PREFIX = "ProfilerStep#"
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")

# Slot kinds (index into the per-copy offset list).
K_TS, K_STEP, K_CORR, K_EXT, K_SEQ, K_EVIDX, K_PYID = range(7)
# Flow ids other than ac2g get kinds from K_FLOW0 upwards, one per flow `cat`.
K_FLOW0 = 7

ARG_KINDS = {
    "correlation": K_CORR,
    "External id": K_EXT,
    "Sequence number": K_SEQ,
    "Ev Idx": K_EVIDX,
    "Python id": K_PYID,
    "Python parent id": K_PYID,
}
ARG_RE = re.compile(
    r'"(correlation|External id|Sequence number|Ev Idx|Python id|Python parent id)":(\s*)(\d+)'
)
TS_RE = re.compile(r'"ts":(\s*)(-?\d+)((?:\.\d+)?)')
DUR_RE = re.compile(r'"dur":(\s*)(\d+)((?:\.\d+)?)')
ID_RE = re.compile(r'"id":(\s*)(\d+)')
STEP_RE = re.compile(r'"name":(\s*)"ProfilerStep#(\d+)"')


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]?i?B?)\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (e.g. 100MB, 1GB, 512MiB)")
    num = float(m.group(1))
    unit = m.group(2).upper().rstrip("B")
    mult = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
            "KI": 2**10, "MI": 2**20, "GI": 2**30, "TI": 2**40}[unit]
    return int(num * mult)


def read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read().decode("utf-8")


def skip_ws(text, i):
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i


def split_top_level(text):
    """Walk the top-level object. Returns (members, events) where members is a list of
    (key, key_start, value_start, value_end) and events is a list of (start, end) text
    spans of the traceEvents items, plus the span of the traceEvents array."""
    dec = json.JSONDecoder()
    i = skip_ws(text, 0)
    if text[i] != "{":
        raise ValueError("trace does not start with a JSON object")
    i += 1
    members = []
    events = []
    arr_span = None
    while True:
        i = skip_ws(text, i)
        if text[i] == "}":
            break
        if text[i] == ",":
            i += 1
            continue
        key_start = i
        key, i = dec.raw_decode(text, i)
        i = skip_ws(text, i)
        if text[i] != ":":
            raise ValueError(f"expected ':' after key {key!r}")
        i = skip_ws(text, i + 1)
        value_start = i
        if key == "traceEvents":
            if text[i] != "[":
                raise ValueError("traceEvents is not an array")
            i += 1
            while True:
                i = skip_ws(text, i)
                if text[i] == "]":
                    i += 1
                    break
                if text[i] == ",":
                    i += 1
                    continue
                start = i
                _, i = dec.raw_decode(text, i)
                events.append((start, i))
            arr_span = (value_start, i)
        else:
            _, i = dec.raw_decode(text, i)
        members.append((key, key_start, value_start, i))
    if arr_span is None:
        raise ValueError("no traceEvents member")
    return members, events, arr_span


def ev_corr(ev):
    """Correlation id of a GPU op or of an ac2g flow end on one, else None."""
    cat = ev.get("cat")
    if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
        return ev.get("args", {}).get("correlation")
    if cat == "ac2g" and ev.get("ph") == "f":
        return ev.get("id")
    return None


def is_unit_event(ev):
    ph = ev.get("ph")
    if ph == "M":
        return False
    if ev.get("cat") == "Trace":
        return False
    if ph == "i" and ev.get("s") == "g":
        return False
    return "ts" in ev


def ts_ns(int_part, frac):
    """Exact integer ns of a "us.fff" timestamp text (frac includes the dot)."""
    digits = (frac[1:] + "000")[:3] if frac else "000"
    v = int(int_part)
    return v * 1000 + (int(digits) if v >= 0 else -int(digits))


class Unit:
    """The repetition unit compiled to one %-format template and its slots."""

    def __init__(self, text, spans, evs, sep):
        self.flow_kinds = {}  # flow cat -> slot kind
        parts = []
        self.bases = []
        self.kinds = []
        ranges = {}

        def note(kind, value):
            lo, hi = ranges.get(kind, (value, value))
            ranges[kind] = (min(lo, value), max(hi, value))

        t_min = None
        t_max = None
        steps = set()
        for (start, end), ev in zip(spans, evs):
            chunk = text[start:end]
            cat = ev.get("cat")
            # Collect (pos, end, replacement_format, kind, base) edits, then apply.
            edits = []
            m = TS_RE.search(chunk)
            if m:
                edits.append((m.start(2), m.end(2), K_TS, int(m.group(2))))
                t0 = ts_ns(m.group(2), m.group(3))
                t1 = t0
                d = DUR_RE.search(chunk)
                if d:
                    t1 = t0 + ts_ns(d.group(2), d.group(3))
                t_min = t0 if t_min is None else min(t_min, t0)
                t_max = t1 if t_max is None else max(t_max, t1)
            for m in ARG_RE.finditer(chunk):
                v = int(m.group(3))
                if v == 0:
                    continue
                kind = ARG_KINDS[m.group(1)]
                edits.append((m.start(3), m.end(3), kind, v))
                note(kind, v)
            if ev.get("ph") in ("s", "f", "t") and "id" in ev:
                m = ID_RE.search(chunk)
                v = int(m.group(2))
                if cat == "ac2g":
                    kind = K_CORR
                else:
                    kind = self.flow_kinds.setdefault(cat, K_FLOW0 + len(self.flow_kinds))
                edits.append((m.start(2), m.end(2), kind, v))
                note(kind, v)
            m = STEP_RE.search(chunk)
            if m:
                v = int(m.group(2))
                edits.append((m.start(2), m.end(2), K_STEP, v))
                steps.add(v)
            edits.sort()
            pos = 0
            out = []
            for a, b, kind, v in edits:
                out.append(chunk[pos:a].replace("%", "%%"))
                out.append("%d")
                self.kinds.append(kind)
                self.bases.append(v)
                pos = b
            out.append(chunk[pos:].replace("%", "%%"))
            parts.append("".join(out))
        self.template = sep.replace("%", "%%").join(parts)
        self.t_min_ns = t_min
        self.t_max_ns = t_max
        self.strides = {k: hi - lo + 1 for k, (lo, hi) in ranges.items()}
        self.strides[K_STEP] = (max(steps) - min(steps) + 1) if steps else 0
        self.n_steps = len(steps)
        self.n_kinds = K_FLOW0 + len(self.flow_kinds)
        self.n_events = len(parts)
        # Group slots by kind once, so a copy is one offset add per slot.
        self.slots = list(zip(self.bases, self.kinds))

    def render(self, k, period_us):
        offs = [0] * self.n_kinds
        offs[K_TS] = k * period_us
        for kind, stride in self.strides.items():
            if kind != K_TS:
                offs[kind] = k * stride
        return self.template % tuple([b + offs[kind] for b, kind in self.slots])


def shift_text_ts(chunk, delta_us):
    m = TS_RE.search(chunk)
    if not m or delta_us == 0:
        return chunk
    return chunk[: m.start(2)] + str(int(m.group(2)) + delta_us) + chunk[m.end(2):]


def stretch_text_dur(chunk, delta_us):
    m = DUR_RE.search(chunk)
    if not m or delta_us == 0:
        return chunk
    return chunk[: m.start(2)] + str(int(m.group(2)) + delta_us) + chunk[m.end(2):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="src", required=True, help="recorded Kineto trace (.json or .json.gz)")
    ap.add_argument("--size", type=parse_size, required=True,
                    help="target uncompressed size, e.g. 100MB, 1GB, 512MiB")
    ap.add_argument("--out", required=True, help="output file (.json or .json.gz)")
    ap.add_argument("--gap-us", type=int, default=100,
                    help="idle gap between two copies of the unit, us (default 100)")
    ap.add_argument("--rank", type=int, default=None,
                    help="add distributedInfo with this rank (for HTA)")
    ap.add_argument("--world-size", type=int, default=1)
    ap.add_argument("--orphans", choices=("each", "once"), default="each",
                    help="GPU ops whose launch call is not in the source (launched before "
                         "the recording window): repeat them in each copy (default; keeps "
                         "the GPU as busy as in the source) or write them in the first copy only")
    ap.add_argument("--gzip-level", type=int, default=1)
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()

    t_start = time.monotonic()
    text = read_text(args.src)
    members, spans, (arr_start, arr_end) = split_top_level(text)
    keys = [m[0] for m in members]
    if not spans:
        sys.exit("make_trace: source has no trace events")

    evs = [json.loads(text[a:b]) for a, b in spans]
    # Separator between events as the source writes it (",\n  " in Kineto files).
    sep = text[spans[0][1]:spans[1][0]] if len(spans) > 1 else ",\n  "

    unit_idx = [i for i, ev in enumerate(evs) if is_unit_event(ev)]
    if not unit_idx:
        sys.exit("make_trace: source has no events to replicate")
    first_unit = unit_idx[0]
    pre_idx = [i for i in range(first_unit) if not is_unit_event(evs[i])]
    post_idx = [i for i in range(first_unit, len(evs)) if not is_unit_event(evs[i])]

    unit = Unit(text, [spans[i] for i in unit_idx], [evs[i] for i in unit_idx], sep)
    # GPU ops whose launching runtime/driver call is not in the source (work launched
    # before the recording window; in Kineto the ac2g flow id is the correlation id).
    launch_corr = {ev.get("args", {}).get("correlation") for ev in evs
                   if ev.get("cat") in ("cuda_runtime", "cuda_driver")}
    orphan = {i for i in unit_idx
              if ev_corr(evs[i]) is not None and ev_corr(evs[i]) not in launch_corr}
    n_orphan_ops = sum(1 for i in orphan if evs[i].get("cat") in GPU_CATS)
    later = unit
    if args.orphans == "once" and orphan:
        kept = [i for i in unit_idx if i not in orphan]
        later = Unit(text, [spans[i] for i in kept], [evs[i] for i in kept], sep)
        later.strides = unit.strides        # same id spaces as the full unit
    span_ns = unit.t_max_ns - unit.t_min_ns
    period_us = math.ceil(span_ns / 1000) + args.gap_us

    # Head: the source text up to the first event, with distributedInfo spliced in.
    head = text[:spans[0][0]]
    if args.rank is not None:
        if "distributedInfo" in keys:
            sys.exit("make_trace: source already has distributedInfo; --rank not supported")
        info = ('"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d},\n  '
                % (args.rank, args.world_size))
        # Insert before the member that follows deviceProperties (Kineto's order),
        # else before the first member.
        if "deviceProperties" in keys and keys.index("deviceProperties") + 1 < len(keys):
            at = members[keys.index("deviceProperties") + 1][1]
        else:
            at = members[0][1]
        head = head[:at] + info + head[at:]
    tail = text[spans[-1][1]:]

    # The number of copies is decided while writing: stop before a copy that would
    # overshoot the target by more than half of it.
    copy0 = unit.render(0, period_us)
    post_bytes = len(tail.encode()) + sum(
        len(text[spans[i][0]:spans[i][1]].encode()) + len(sep) for i in post_idx)

    if args.out.endswith(".gz"):
        raw = open(args.out, "wb")
        out = gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                            compresslevel=args.gzip_level, mtime=0)
    else:
        raw = None
        out = open(args.out, "wb", buffering=4 << 20)

    written = 0

    def w(b):
        nonlocal written
        written += len(b)
        out.write(b)

    unit_end_us = unit.t_max_ns // 1000
    unit_start_us = unit.t_min_ns // 1000
    w(head.encode())
    first = True
    for i in pre_idx:
        w((("" if first else sep) + text[spans[i][0]:spans[i][1]]).encode())
        first = False
    sep_b = sep.encode()
    last_progress = time.monotonic()
    n_copies = 0
    while True:
        block = (copy0 if n_copies == 0 else later.render(n_copies, period_us)).encode()
        if n_copies > 0 and written + len(sep_b) + len(block) // 2 + post_bytes > args.size:
            break
        w(block if first else sep_b + block)
        first = False
        n_copies += 1
        if not args.quiet and time.monotonic() - last_progress > 5:
            last_progress = time.monotonic()
            print(f"make_trace: {n_copies} copies, {written / 1e6:.0f} MB", file=sys.stderr)
    total_shift = (n_copies - 1) * period_us
    for i in post_idx:
        chunk = text[spans[i][0]:spans[i][1]]
        ev = evs[i]
        if ev.get("ph") == "X" and "dur" in ev and ev["ts"] <= unit_start_us \
                and ev["ts"] + ev["dur"] >= unit_end_us:
            chunk = stretch_text_dur(chunk, total_shift)      # the profiler Trace span
        elif ev.get("ph") != "M" and ev.get("ts", 0) > unit_end_us:
            chunk = shift_text_ts(chunk, total_shift)         # Record Window End
        w((sep + chunk).encode())
    w(tail.encode())
    out.close()
    if raw is not None:
        raw.close()

    elapsed = time.monotonic() - t_start
    if not args.quiet:
        n_events = unit.n_events + (n_copies - 1) * later.n_events
        print(f"make_trace: {args.out}: {n_copies} copies x {unit.n_events} events "
              f"({n_events} events, {n_copies * unit.n_steps} profiler steps), "
              f"{written / 1e6:.1f} MB uncompressed, period {period_us} us, "
              f"{n_orphan_ops} GPU ops per copy without their launch call ({args.orphans}), "
              f"{elapsed:.1f} s ({written / 1e6 / max(elapsed, 1e-9):.0f} MB/s)",
              file=sys.stderr)


if __name__ == "__main__":
    main()
