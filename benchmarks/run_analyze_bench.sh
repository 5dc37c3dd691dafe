#!/usr/bin/env bash
# End-to-end throughput and peak memory of `chokepoint analyze` on large Kineto traces,
# next to HolisticTraceAnalysis (HTA) on the 100 MB one. Prints a Markdown table.
#
#   benchmarks/run_analyze_bench.sh [CHOKEPOINT_BIN]      # default build/chokepoint
#
# Environment:
#   BENCH_DIR   where the generated traces go (default /tmp/chokepoint-bench)
#   SOURCE      recorded trace to replicate (default tests/data/kineto/healthy_bf16.json.gz)
#   REPEAT      runs per chokepoint row; the table shows the median wall time and the
#               largest peak RSS (default 3)
#   SKIP_HTA=1  leave HTA out; SKIP_1G=1 leave the 1 GB trace out
#
# Each run is measured with GNU time (/usr/bin/time -v: wall clock and maximum resident
# set size) with the input already in the page cache (it is read once before). The
# "1 core" rows pin chokepoint to CPU 0 with taskset. HTA is timed the same way around
# benchmarks/hta_bench.py (interpreter start, imports, load, temporal and idle-time
# breakdowns); its own split of the time is printed below the table.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/chokepoint}"
bench_dir="${BENCH_DIR:-/tmp/chokepoint-bench}"
source_trace="${SOURCE:-$root/tests/data/kineto/healthy_bf16.json.gz}"
repeat="${REPEAT:-3}"
hta_py="$root/benchmarks/.venv/bin/python"

if [[ ! -x /usr/bin/time ]]; then
  echo "installing GNU time (Debian package 'time')" >&2
  if [[ $(id -u) -eq 0 ]]; then
    apt-get install -y -q time >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q time >/dev/null; }
  else
    sudo apt-get install -y -q time >/dev/null
  fi
fi

mkdir -p "$bench_dir"
t100="$bench_dir/big100.json"
t1g="$bench_dir/big1g.json"
# --rank 0 adds distributedInfo so that HTA can read the same file.
gen_trace() {  # gen_trace OUT SIZE
  if [[ ! -s "$1" ]]; then
    python3 "$root/benchmarks/make_trace.py" --from "$source_trace" --size "$2" --rank 0 --out "$1"
  fi
}
gen_trace "$t100" 100MB
[[ "${SKIP_1G:-0}" == 1 ]] || gen_trace "$t1g" 1GB

rows=()
notes=()

# measure LABEL INPUT CMD... -> appends a table row from REPEAT runs
measure() {
  local tool="$1" input="$2" n="$3"; shift 3
  local walls=() rss=0 i tf
  cat "$input" >/dev/null          # warm the page cache
  tf="$(mktemp)"
  for ((i = 0; i < n; i++)); do
    if ! /usr/bin/time -v -o "$tf" "$@" >"$tf.out" 2>"$tf.err"; then
      echo "FAILED: $*" >&2; tail -5 "$tf.err" >&2
      rows+=("| $tool | $(basename "$input") | $(size_mb "$input") | failed | | | |")
      rm -f "$tf" "$tf.out" "$tf.err"; return 0
    fi
    walls+=("$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tf")")
    local r; r="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tf")"
    if (( r > rss )); then rss=$r; fi
  done
  LAST_STDOUT="$(cat "$tf.out")"
  rm -f "$tf" "$tf.out" "$tf.err"
  rows+=("$(python3 - "$tool" "$input" "$rss" "${walls[@]}" <<'EOF'
import os, statistics, sys
tool, path, rss_kb = sys.argv[1], sys.argv[2], int(sys.argv[3])
def secs(t):  # h:mm:ss or m:ss.ss
    s = 0.0
    for part in t.split(":"):
        s = s * 60 + float(part)
    return s
wall = statistics.median(secs(t) for t in sys.argv[4:])
mb = os.path.getsize(path) / 1e6
rss = rss_kb / 1024
print(f"| {tool} | {os.path.basename(path)} | {mb:.0f} | {wall:.2f} | {mb / wall:.1f} | "
      f"{rss:.0f} | {rss * 1048576 / os.path.getsize(path):.2f} |")
EOF
)")
}

size_mb() { python3 -c 'import os,sys; print(f"{os.path.getsize(sys.argv[1])/1e6:.0f}")' "$1"; }

inputs=("$t100")
[[ "${SKIP_1G:-0}" == 1 ]] || inputs+=("$t1g")

if [[ -x "$bin" ]]; then
  for t in "${inputs[@]}"; do
    measure "chokepoint" "$t" "$repeat" "$bin" analyze "$t" --format json -o /dev/null
    measure "chokepoint, 1 core (taskset -c 0)" "$t" "$repeat" \
      taskset -c 0 "$bin" analyze "$t" --format json -o /dev/null
  done
else
  for t in "${inputs[@]}"; do
    rows+=("| chokepoint | $(basename "$t") | $(size_mb "$t") | (no binary at $bin) | | | |")
  done
fi

if [[ "${SKIP_HTA:-0}" != 1 ]]; then
  if [[ ! -x "$hta_py" ]] || ! "$hta_py" -c 'import hta' 2>/dev/null; then
    bash "$root/benchmarks/setup_hta.sh" >&2
  fi
  hta_dir="$bench_dir/hta100"          # HTA wants a directory of rank traces
  mkdir -p "$hta_dir"
  ln -sf "$t100" "$hta_dir/rank-0.json"
  measure "HTA $("$hta_py" -c 'from hta.version import __version__ as v; print(v)')" \
    "$t100" 1 "$hta_py" "$root/benchmarks/hta_bench.py" "$hta_dir" --json
  notes+=("HTA split (hta_bench.py): $LAST_STDOUT")
fi

echo
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM," \
  "$(. /etc/os-release; echo "$PRETTY_NAME")"
echo "chokepoint: $bin ($( [[ -x "$bin" ]] && "$bin" --version 2>/dev/null | head -1 || echo 'not built'))"
echo
echo "| tool | input | size MB | wall s | MB/s | peak RSS MiB | RSS/input |"
echo "|---|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
for n in "${notes[@]}"; do echo "$n"; done
