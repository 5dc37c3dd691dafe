#!/bin/bash
# A traced C++ program killed with SIGTERM mid-run still leaves a complete trace (the
# tracer's worker thread flushes, then the process dies of the signal):
#   bash benchmarks/tracer_cost/gpu_signal_check.sh PREBUILT OUT
set -u
pre=$(cd "$1" && pwd); out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
nvcc -O2 -arch=sm_90 -o "$work/launch_cost" "$here/launch_cost.cu" -lcupti || exit 1
mkdir -p "$work/t"
CUDA_INJECTION64_PATH=$pre/libchokepoint_tracer.so CHOKEPOINT_TRACE_DIR=$work/t CHOKEPOINT_TRACE_STATS=1 \
  "$work/launch_cost" traced 400 1000000 > "$work/sig.out" 2> "$work/sig.err" &
pid=$!
sleep 3
kill -TERM $pid
wait $pid
echo "exit status $? (143 = died of SIGTERM)"
cat "$work/sig.err"
ls -la "$work/t"
LD_LIBRARY_PATH=$pre "$pre/chokepoint" analyze "$work"/t/trace-*.cptrace 2>&1 | head -25
