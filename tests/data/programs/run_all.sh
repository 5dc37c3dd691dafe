#!/usr/bin/env bash
# run_all.sh BIN OUT [extra args passed to every program]
#
# Runs every validation program in each variant with plain python (no
# chokepoint yet: BIN, the chokepoint binary, is accepted but not used here;
# wrap the "$PYTHON" invocation below with it), writes
# OUT/PROG.json, OUT/PROG.compile.json (gpt_char, unet_diffusion only) and
# OUT/PROG.fix.json plus the matching .log files, and prints each median.
# Environment: PYTHON (default python3).
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 BIN OUT [extra program args]" >&2
    exit 2
fi
BIN=$1
OUT=$2
shift 2
PYTHON=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
status=0

run() {  # run NAME PROG ARGS...
    local name=$1 prog=$2
    shift 2
    local json="$OUT/$name.json" log="$OUT/$name.log"
    rm -f "$json"
    if "$PYTHON" "$HERE/$prog.py" --result "$json" "$@" >"$log" 2>&1 && [ -s "$json" ]; then
        "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%-28s median %9.2f ms/iter  (%d iters, %s)" % (sys.argv[2], d["median_ms"], len(d["iter_ms"]), d["device"]))' "$json" "$name"
    else
        echo "$name FAILED (see $log)"
        status=1
    fi
}

for prog in gpt_char resnet_fake lstm_lm bert_finetune unet_diffusion; do
    run "$prog" "$prog" "$@"
    case $prog in
        gpt_char|unet_diffusion) run "$prog.compile" "$prog" --compile "$@" ;;
    esac
    run "$prog.fix" "$prog" --fix "$@"
done
exit $status
