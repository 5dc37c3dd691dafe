#!/bin/bash
# `chokepoint kernels --ncu` on the H200 (issue 17's targets), from a packaged build:
#   bash tests/data/kernels/gpu_kernels.sh BIN_DIR OUT
# BIN_DIR holds chokepoint, libchokepoint_bench.so, libchokepoint_tracer.so and their
# non-system libraries (scripts/gpu_check.sh package). Writes to OUT: bench's quick
# profile, the kernels reports of ncu_kernels.cu and of kernels_torch.py (JSON, and text
# read back from ncu's exports), the bad-input checks, and rest.tar.gz (logs, exports).
set -u
bin=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
cd "$work" || exit 1
mkdir res
nvcc -O2 -arch=sm_90 -o ncu_kernels "$here/ncu_kernels.cu" -lcublas || exit 1
{ time "$bin/chokepoint" bench --quick --json -o "$out/profile.json" -q; } 2> res/bench.err
k=("$bin/chokepoint" kernels --ncu --ceilings "$out/profile.json")
{ time timeout 80 "${k[@]}" --top 4 --dir cu -f json -o "$out/ncu_kernels.json" -- ./ncu_kernels; } \
  > res/ncu_kernels.log 2>&1
"$bin/chokepoint" kernels --ceilings "$out/profile.json" cu/ncu-*.csv > "$out/ncu_kernels.txt" 2>&1
# Bad input: ncu missing, a command that fails before any CUDA work.
{ "${k[@]}" --ncu-path /nonexistent/ncu -- ./ncu_kernels; echo "rc=$?"
  "${k[@]}" --dir bad -- sh -c 'exit 3'; echo "rc=$?"; ls bad; } > "$out/bad_input.txt" 2>&1
{ time timeout 90 "${k[@]}" --top 3 --dir torch -f json -o "$out/torch.json" -- python3 "$here/kernels_torch.py"; } \
  > res/torch.log 2>&1
"$bin/chokepoint" kernels --ceilings "$out/profile.json" torch/ncu-*.csv > "$out/torch.txt" 2>&1
tar czf "$out/rest.tar.gz" res cu torch
ls -la "$out"
