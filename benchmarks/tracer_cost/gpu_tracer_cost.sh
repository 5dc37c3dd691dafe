#!/bin/bash
# Tracer cost per launch on the GPU machine (docs/BENCHMARKS.md "Tracer cost per launch"):
#   [PYROUNDS=2] bash benchmarks/tracer_cost/gpu_tracer_cost.sh PREBUILT OUT [ROUNDS]
# PREBUILT holds chokepoint and libchokepoint_tracer.so (scripts/gpu_check.sh package).
# Modes interleaved, ROUNDS rounds (default 5), each mode a fresh process.
set -u
pre=$(cd "$1" && pwd)
out=$2
rounds=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
cupti=/usr/local/cuda/extras/CUPTI/lib64
[ -d $cupti ] || cupti=/usr/local/cuda/lib64
work=$(mktemp -d)
nvcc -O2 -arch=sm_90 -I/usr/local/cuda/extras/CUPTI/include -o "$work/launch_cost" "$here/launch_cost.cu" \
  -L$cupti -lcupti -Xlinker -rpath=$cupti || exit 1
export LD_LIBRARY_PATH=$pre:${LD_LIBRARY_PATH:-}
traced() {  # traced NAME ENV... : the tracer library as `run --trace` loads it
  local name=$1; shift
  rm -rf "$work/t"; mkdir -p "$work/t"
  env CUDA_INJECTION64_PATH=$pre/libchokepoint_tracer.so CHOKEPOINT_TRACE_DIR=$work/t "$@" \
    "$work/launch_cost" traced | sed "s/^traced/$name/"
}
for r in $(seq "$rounds"); do
  "$work/launch_cost" none
  "$work/launch_cost" floor
  "$work/launch_cost" floor-walk
  traced tracer
  traced tracer-api0 CHOKEPOINT_TRACE_API=0
  traced tracer-noconvert CHOKEPOINT_TRACE_CONVERT=0
  traced tracer-pinned CHOKEPOINT_TRACE_PINNED=1
  traced tracer-perthread0 CHOKEPOINT_TRACE_PER_THREAD=0
  traced tracer-window-outside CHOKEPOINT_TRACE_WINDOW=at=3600000000000,for=1000000000
done | tee "$out/launch_cost.txt"
ls -la "$work/t" | head
# The same choices on PyTorch's launch-bound forward (window_loop.py: 60 Linear+GELU on 8
# rows, ~180 kernels and one synchronization a step), medians of 1000 steps (the first 100
# left out); "win" is a steps window 400:300, its inside steps only.
loop=$here/../../tests/data/tracer/window_loop.py
py() {  # py NAME ENV... [-- ARGS]
  local name=$1; shift
  local envs=() args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift && args=("$@")
  rm -rf "$work/t"; mkdir -p "$work/t"
  env CHOKEPOINT_TRACE_DIR=$work/t "${envs[@]}" python3 "$loop" 1000 "$work/$name.json" --nvtx "${args[@]}" >/dev/null 2>"$work/$name.err"
  python3 -c "
import json,statistics,sys
ms=json.load(open('$work/$name.json'))['ms']
lo,hi=(400,700) if '$name'.startswith('win') else (100,1000)
print('py-$name', 'step_ms %.3f' % statistics.median(ms[lo:hi]))"
}
inj=CUDA_INJECTION64_PATH=$pre/libchokepoint_tracer.so
nvtx=NVTX_INJECTION64_PATH=$pre/libchokepoint_tracer.so
for r in $(seq "${PYROUNDS:-2}"); do
  py plain
  py tracer $inj $nvtx
  py win $inj $nvtx CHOKEPOINT_TRACE_WINDOW=steps=400:300
  py tracer-api0 $inj $nvtx CHOKEPOINT_TRACE_API=0
  py tracer-perthread0 $inj $nvtx CHOKEPOINT_TRACE_PER_THREAD=0
  py profiler -- --profiler
done | tee -a "$out/launch_cost.txt"
for f in "$work"/*.err; do echo "$f: $(tail -n 2 "$f")"; done | head -40
# Where the buffers were processed, and how long conversion took (one traced run each).
py stats $inj $nvtx CHOKEPOINT_TRACE_STATS=1; tail -n 1 "$work/stats.err"
py stats-perthread0 $inj $nvtx CHOKEPOINT_TRACE_STATS=1 CHOKEPOINT_TRACE_PER_THREAD=0; tail -n 1 "$work/stats-perthread0.err"
