#!/usr/bin/env bash
# Runs the realistic training programs under chokepoint on the GPU machine (issue 11's
# validation, docs/VALIDATION.md "Steps and host hot spots").
# Usage: tests/data/programs/record_programs.sh BIN_DIR OUT MODES SPEC...
#   BIN_DIR holds chokepoint, libchokepoint_tracer.so and their libraries (see
#   tests/data/pairs/README.md); py-spy is found on PATH or $CHOKEPOINT_PY_SPY.
#   MODES: comma list of plain (python alone), run (chokepoint run), trace (run --trace),
#   nostacks (run --no-stacks: what py-spy's sampling costs the job, against run),
#   window (run --trace-time $WINDOW, default 10s:2s: a traced window, untraced around it).
#   STACK_RATE=HZ passes --stack-rate HZ (py-spy's sampling rate) to every mode with stacks.
#   SPEC: NAME=PROGRAM.py[,ARG...]  e.g. gpt=gpt_char.py  gpt_fix=gpt_char.py,--fix
# Per spec and mode it writes OUT/NAME.MODE.{out,result.json} and, under chokepoint,
# OUT/NAME.MODE.rec/ and OUT/NAME.MODE.report.json.
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; modes=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
mkdir -p "$out"
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}
  IFS=, read -r -a parts <<<"$rest"
  prog=${parts[0]}; args=("${parts[@]:1}")
  for mode in ${modes//,/ }; do
    base="$out/$name.$mode"
    t0=$(date +%s.%N)
    case $mode in
      plain) (cd "$here" && timeout 200 python3 "$prog" "${args[@]}" --result "$base.result.json") >"$base.out" 2>&1 ;;
      run|trace|nostacks|window)
        extra=(); [[ $mode == trace ]] && extra=(--trace); [[ $mode == nostacks ]] && extra=(--no-stacks)
        [[ $mode == window ]] && extra=(--trace-time "${WINDOW:-10s:2s}")
        [[ $mode != nostacks && -n ${STACK_RATE:-} ]] && extra+=(--stack-rate "$STACK_RATE")
        (cd "$here" && timeout 200 "$bin/chokepoint" run "${extra[@]}" --view none -o "$base.rec" \
           --report "$base.report.json" -f json -- python3 "$prog" "${args[@]}" --result "$base.result.json") \
          >"$base.out" 2>&1 ;;
    esac
    rc=$?
    echo "$name $mode: exit $rc, $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s, $(python3 - "$base.result.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1])); print(f"median {r['median_ms']:.2f} ms/iter")
except Exception as e:
    print("no result", e)
PY
)"
  done
done
