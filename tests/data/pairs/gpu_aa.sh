#!/usr/bin/env bash
# Issue 45 on the GPU machine: A/A reruns and before/after pairs for `diff`, each variant in
# its own process, interleaved by round (broken, fixed, broken, fixed ...) so the host's
# drift falls on both alike.
# Usage: tests/data/pairs/gpu_aa.sh OUT ROUNDS SECONDS PAIR[:FIXFLAG] ...
#   FIXFLAG is the flag of the fixed variant (--fix when omitted; "-" for none: A/A only).
# Writes OUT/PAIR/broken-R.json (the printed untraced timings, --result) and
# broken-R.kineto.json.gz (4 profiled steps after them), the same for fixed-R, and
# OUT/log.txt. docs/VALIDATION.md "diff: A/A and pairs" is made from them
# (tests/data/pairs/aa_table.py).
set -uo pipefail
out=$1 rounds=$2 secs=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    p=${spec%%:*}; fix=--fix; [[ $spec == *:* ]] && fix=${spec#*:}
    d="$out/$p"; mkdir -p "$d"
    variants="broken"; [[ $fix != - ]] && variants="broken fixed"
    for v in $variants; do
      args=(--seconds "$secs" --result "$d/$v-$r.json" --profile "$d/$v-$r.kineto.json.gz")
      [[ $v == fixed ]] && args+=("$fix")
      t0=$(date +%s.%N)
      (cd "$here" && timeout 200 python3 "$p.py" "${args[@]}") >"$d/$v-$r.out" 2>&1
      rc=$?
      echo "round $r $p $v: exit $rc $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s $(grep -h -E "median .* ms/iter" "$d/$v-$r.out" | tail -1)" | tee -a "$out/log.txt"
    done
  done
done
