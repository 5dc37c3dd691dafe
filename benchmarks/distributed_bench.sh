#!/bin/bash
# `chokepoint analyze` over the ranks of a synthetic distributed job (issue 16): RANKS
# ranks made from the real H200 trace tests/data/kineto/sync_bound.json.gz with NCCL
# all-reduces and a 3 ms straggler planted (tests/data/distributed/make_ranks.py), each
# replicated to SIZE of uncompressed JSON (benchmarks/make_trace.py, gzip level 1).
# Prints wall time, peak RSS and whether the planted straggler was named.
#   benchmarks/distributed_bench.sh build/chokepoint            # RANKS=64 SIZE=100MB
#   RANKS=64 SIZE=20MB STRAGGLER=17 BENCH_DIR=/tmp/cp-dist benchmarks/distributed_bench.sh build/chokepoint
set -eu
BIN=${1:?usage: distributed_bench.sh CHOKEPOINT}
RANKS=${RANKS:-64}
SIZE=${SIZE:-100MB}
STRAGGLER=${STRAGGLER:-17}
DIR=${BENCH_DIR:-/tmp/chokepoint-dist}/r${RANKS}_${SIZE}
HERE=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f "$DIR/ranks/rank$((RANKS - 1)).json.gz" ]; then
  rm -rf "$DIR" && mkdir -p "$DIR/ranks"
  python3 "$HERE/tests/data/distributed/make_ranks.py" "$HERE/tests/data/kineto/sync_bound.json.gz" "$DIR/src" \
    --ranks "$RANKS" --straggler "$STRAGGLER" --delay-ms 3
  for ((r = 0; r < RANKS; r++)); do
    python3 "$HERE/benchmarks/make_trace.py" --from "$DIR/src/rank$r.json.gz" --size "$SIZE" \
      --out "$DIR/ranks/rank$r.json.gz" > /dev/null
  done
fi
du -sh "$DIR/ranks" | sed 's/^/compressed inputs: /'
cat "$DIR"/ranks/*.json.gz > /dev/null  # into the page cache
for run in 1 2 3; do
  /usr/bin/time -f "run $run: wall %e s, peak RSS %M KiB" "$BIN" analyze "$DIR/ranks" --format json -o "$DIR/report.json"
done
python3 - "$DIR/report.json" "$STRAGGLER" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["distributed"]
s = d["straggler"] or {}
print(f"ranks {len(d['ranks'])}, matched collectives {d['matched_collectives']}, straggler {s.get('rank')} "
      f"(planted {sys.argv[2]}), extra {s.get('extra_ms')} ms (planted 3), cause {s.get('cause')}")
PY
# One rank alone, for its own peak RSS.
/usr/bin/time -f "one rank alone: wall %e s, peak RSS %M KiB" "$BIN" analyze "$DIR/ranks/rank0.json.gz" --format json -o /dev/null
