#!/usr/bin/env bash
# What py-spy's sampling rate costs a launch-bound training program, and stack recordings
# of the five programs at rates fast enough to count their iterations (issue 11: steps
# under plain `run`). One device call; carry .devbin and .whl (py-spy's wheel).
#   bash tests/data/programs/gpu_rates.sh BIN_DIR OUT [ROUNDS] [PART]
# PART: cost (gpt_char with no stacks, 20, 100 and 200 Hz, interleaved, ROUNDS rounds),
#       steps (lstm, bert, unet, resnet workers=0, gpt, gpt --compile at $RATES, default
#       "200 500" Hz), or both.
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; rounds=${3:-2}; part=${4:-both}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=/tmp/programs-rates; rm -rf "$work"; mkdir -p "$work" "$out"
if [[ -d $root/.whl ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$root"/.whl/*.whl
  export PATH=/tmp/site/bin:$PATH
fi
rec() { STACK_RATE=$1 bash "$here/record_programs.sh" "$bin" "$work/$2" "$3" "${@:4}" 2>&1 | tee -a "$work/record.txt"; }
pack() {
  find "$work/$1" \( -name '*.cptrace' -o -name 'pyspy.json' -o -name 'samples.jsonl' \) -exec gzip -9 {} \; 2>/dev/null
  tar czf "$out/$1.tgz" -C "$work" "$1"
}
if [[ $part == cost || $part == both ]]; then
  for r in $(seq "$rounds"); do
    rec "" cost nostacks "g${r}_none=gpt_char.py,--iters,250"
    for hz in 20 100 200; do rec "$hz" cost run "g${r}_${hz}=gpt_char.py,--iters,250"; done
  done
  pack cost
fi
if [[ $part == steps || $part == both ]]; then
  for hz in ${RATES:-200 500}; do
    rec "$hz" steps run "lstm_$hz=lstm_lm.py,--iters,1000" "bert_$hz=bert_finetune.py,--iters,120" \
      "unet_$hz=unet_diffusion.py,--iters,100" "resnet_$hz=resnet_fake.py,--iters,40" \
      "gpt_$hz=gpt_char.py,--iters,250" "gptc_$hz=gpt_char.py,--compile,--iters,300"
  done
  pack steps
fi
cp "$work/record.txt" "$out/" 2>/dev/null
ls -la "$out"
