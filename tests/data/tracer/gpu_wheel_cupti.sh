#!/usr/bin/env bash
# run --trace on a node whose CUDA toolkit is out of reach: the toolkit's library folder is
# hidden in a private mount namespace (unshare -m, root), so the tracer must find CUPTI in
# the job's Python environment (the nvidia-* wheel PyTorch installed: nvidia/cu13/lib).
#   bash tests/data/tracer/gpu_wheel_cupti.sh PREBUILT OUT
set -u
pre=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
lib=$(dirname "$(readlink -f /usr/local/cuda/lib64/libcupti.so)")
mkdir -p /tmp/empty-lib
unshare -m bash -s "$pre" "$out" "$here" "$lib" <<'INNER'
pre=$1; out=$2; here=$3; lib=$4
mount --bind /tmp/empty-lib "$lib" || { echo "cannot hide $lib (no CAP_SYS_ADMIN?)"; exit 0; }
export LD_LIBRARY_PATH=$pre
echo "hidden: $lib ($(ls "$lib" | wc -l) files visible)"
"$pre/chokepoint" doctor 2>&1 | grep -A3 'run --trace'
timeout 120 "$pre/chokepoint" run --trace --view none -o /tmp/wheel.rec --force -- \
  python3 "$here/window_loop.py" 300 /tmp/wheel-steps.json --nvtx 2>&1 | tail -5
echo "exit $?"
ls /tmp/wheel.rec
"$pre/chokepoint" analyze /tmp/wheel.rec 2>&1 | head -8
INNER
