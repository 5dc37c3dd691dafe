#!/bin/bash
# Records tests/data/distributed/gloo_balanced and gloo_straggler on one H200 (the `run`
# tool, from the repository root, with this folder carried as .devbin/wt16rank):
#   bash .devbin/wt16rank/gpu_gloo.sh .devbin/wt16rank "$OUT"
# Two ranks of gloo_ddp.py share the GPU; the second variant plants a 20 ms sleep per
# step on rank 1. Each writes rank0/rank1 traces and the unprofiled step medians.
set -u
HERE=$1
OUT=$2
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt" 2>&1
python3 -c 'import torch; print(torch.__version__)' >> "$OUT/gpu.txt" 2>&1
for v in balanced:0 straggler:20; do
  name=${v%%:*}
  ms=${v##*:}
  python3 -m torch.distributed.run --nproc-per-node 2 --master-port 29517 \
    "$HERE/gloo_ddp.py" --out "$OUT/gloo_$name" --sleep-ms "$ms" > "$OUT/gloo_$name.log" 2>&1
  echo "$name exit $?" >> "$OUT/gpu.txt"
done
cd "$OUT" && tar czf traces.tgz gloo_balanced gloo_straggler && rm -rf gloo_balanced gloo_straggler
