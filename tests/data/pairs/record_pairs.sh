#!/usr/bin/env bash
# Records the validation pairs on the GPU machine (docs/VALIDATION.md, "What-ifs").
# Usage: tests/data/pairs/record_pairs.sh BIN_DIR OUT PAIR...
#   BIN_DIR holds chokepoint, libchokepoint_tracer.so and the libraries they need
#   (scripts/gpu_check.sh package BUILD BIN_DIR makes it where the GPU machine cannot
#   build). For each PAIR (a script PAIR.py beside this one) it writes OUT/PAIR/:
#     broken.out/.json/.kineto.json.gz, broken.rec/  `chokepoint run` of the broken
#         variant: its printed iteration times (--result JSON), then 4 profiled iterations
#         (torch.profiler trace), the whole under live sampling (the recording)
#     traced.out/.json, traced.rec/   `chokepoint run --trace` of the broken variant (CUPTI)
#     fixed.out/.json/.kineto.json.gz, fixed.rec/   the same as broken, with --fix
# PAIR:N sets the timed seconds (default 4; the traced run takes a third of it).
# NOFIX=1 skips the fixed variant (verdict-only workloads).
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
cp="$bin/chokepoint"
mkdir -p "$out"
for spec in "$@"; do
  p=${spec%%:*}; secs=4; [[ $spec == *:* ]] && secs=${spec##*:}
  d="$out/$p"; mkdir -p "$d"
  t0=$(date +%s)
  variants="broken traced fixed"; [[ ${NOFIX:-0} == 1 || $p == lstm_lm ]] && variants="broken traced"
  for v in $variants; do
    args=(--seconds "$secs" --result "$d/$v.json")
    case $v in
      broken) args+=(--profile "$d/$v.kineto.json.gz"); run=(run) ;;
      fixed) args+=(--fix --profile "$d/$v.kineto.json.gz"); run=(run) ;;
      traced) args=(--seconds "$(python3 -c "print(max(1.0, $secs / 3))")" --result "$d/$v.json"); run=(run --trace) ;;
    esac
    (cd "$here" && timeout 170 "$cp" "${run[@]}" --view none -o "$d/$v.rec" --report "$d/$v.report.json" -f json \
       -- python3 "$p.py" "${args[@]}") >"$d/$v.out" 2>&1
    echo "$p $v: exit $? $(grep -h -E "median .* ms/iter" "$d/$v.out" | tail -1)"
  done
  echo "# $p: $(($(date +%s) - t0)) s"
done
