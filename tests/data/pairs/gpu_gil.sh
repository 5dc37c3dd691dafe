#!/usr/bin/env bash
# One call on the GPU machine: the GIL pair at several rival duties, each round per duty
# the broken variant under `chokepoint run` (live samples and py-spy stacks), the broken
# variant timed plain and the fix (a process pool) timed plain, each in a fresh process.
# Usage: tests/data/pairs/gpu_gil.sh BIN_DIR OUT ROUNDS DUTY...   (carry .devbin and .whl)
# Then, here: for d in gil/r*_d*; do build/chokepoint analyze $d/broken.rec; done (and
# $d/*.json: the printed medians); two of them are kept in gil_threads_gpu/duty/.
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; rounds=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=/tmp/gil; rm -rf "$work"; mkdir -p "$work" "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
if [[ -d $root/.whl ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$root"/.whl/*.whl
  export PATH=/tmp/site/bin:$PATH
fi
{ which py-spy && py-spy --version; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; } >"$work/env.txt" 2>&1
for r in $(seq 0 $((rounds - 1))); do
  for duty in "$@"; do
    d="$work/r${r}_d$duty"; mkdir -p "$d"
    common=(--seconds 10 --warmup 2 --rival-duty "$duty")
    (cd "$here" && timeout 120 "$bin/chokepoint" run --view none -o "$d/broken.rec" -- \
       python3 gil_threads_gpu.py "${common[@]}" --result "$d/broken_run.json") >"$d/broken_run.out" 2>&1
    (cd "$here" && timeout 120 python3 gil_threads_gpu.py "${common[@]}" --result "$d/broken.json") >"$d/broken.out" 2>&1
    (cd "$here" && timeout 120 python3 gil_threads_gpu.py "${common[@]}" --fix --result "$d/fixed.json") >"$d/fixed.out" 2>&1
    echo "round $r duty $duty: $(python3 -c "
import json
f=lambda n: json.load(open('$d/'+n+'.json'))['median_ms']
print('run %.2f plain %.2f fix %.2f ms' % (f('broken_run'), f('broken'), f('fixed')))" 2>&1)" | tee -a "$work/times.txt"
    find "$d" -name 'samples.jsonl' -exec gzip -9 {} \; ; find "$d" -name 'pyspy.json' -exec gzip -9 {} \;
  done
done
tar czf "$out/gil.tgz" -C /tmp gil
ls -la "$out"
