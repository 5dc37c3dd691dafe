#!/usr/bin/env bash
# One call on the GPU machine for issue 11's validation (and issue 10's machine checks):
#   py-spy from the carried wheel, doctor, a quick bench profile used through --ceilings,
#   then the programs under chokepoint (record_programs.sh), everything packed into OUT.
# Usage: tests/data/programs/gpu_round.sh BIN_DIR OUT MODES SPEC...
# (carry .devbin and .whl; see tests/data/pairs/README.md for BIN_DIR)
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; modes=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=/tmp/programs-round; rm -rf "$work"; mkdir -p "$work" "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
if [[ -d $root/.whl ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$root"/.whl/*.whl
  export PATH=/tmp/site/bin:$PATH
fi
{ which py-spy && py-spy --version; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv;
  cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null; id; } >"$work/env.txt" 2>&1
if [[ ${CHECKS:-1} == 1 ]]; then
  "$bin/chokepoint" doctor >"$work/doctor.txt" 2>&1; echo "doctor exit $?" >>"$work/doctor.txt"
  "$bin/chokepoint" doctor --format json >"$work/doctor.json" 2>"$work/doctor.err"
  "$bin/chokepoint" bench --quick --json -q -o "$work/profile.json" >"$work/bench.txt" 2>&1; echo "bench exit $?" >>"$work/bench.txt"
  "$bin/chokepoint" analyze --ceilings "$work/profile.json" -f json "$root/tests/data/kineto/fp32_gemm.json.gz" \
     >"$work/ceilings.report.json" 2>"$work/ceilings.err"; echo "analyze --ceilings exit $?" >>"$work/ceilings.err"
fi
pack() {  # one archive per part, written as soon as it is done: a call cut short keeps them
  find "$work/$1" -name '*.cptrace' -exec gzip -9 {} \; 2>/dev/null
  find "$work/$1" -name 'pyspy.json' -exec gzip -9 {} \; 2>/dev/null
  find "$work/$1" -name 'samples.jsonl' -exec gzip -9 {} \; 2>/dev/null
  tar czf "$out/$1.tgz" -C "$work" "$1"
}
mkdir -p "$work/checks"; mv "$work"/*.txt "$work"/*.json "$work"/*.err "$work/checks/" 2>/dev/null; pack checks
for spec in "$@"; do
  name=${spec%%=*}
  mkdir -p "$work/$name"
  bash "$here/record_programs.sh" "$bin" "$work/$name" "$modes" "$spec" 2>&1 | tee -a "$work/record.txt"
  pack "$name"
done
cp "$work/record.txt" "$out/" 2>/dev/null
ls -la "$out"
