#!/usr/bin/env bash
# Issue 47 on the GPU machine: a CUDA job's GPUs are matched (by PID; the job prints the
# /dev/nvidia* files it holds open, which sampler/gpu's holds_nvidia_device looks for),
# and `sleep` beside a GPU job is not charged with that job's GPU. Run on an H100 on
# 2026-12-07 (docs/VALIDATION.md "diff on the H100").
# Usage: tests/data/hostile/gpu_nvidia_fds.sh BIN_DIR OUT (BIN_DIR: chokepoint and the
# libraries it needs, as for gpu_pid_match.sh). Writes OUT/summary.txt.
set -u
B=$(cd "${1:?usage: gpu_nvidia_fds.sh BIN_DIR OUT}" && pwd); OUT=${2:?usage: gpu_nvidia_fds.sh BIN_DIR OUT}
export LD_LIBRARY_PATH=$B ASAN_OPTIONS=detect_leaks=0
W=$OUT/w; mkdir -p $W; cd $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
cat > job.py <<'PY'
import os, time, torch
x = torch.randn(4096, 4096, device="cuda")
fds = []
for f in os.listdir("/proc/self/fd"):
    try:  # the listing's own fd is closed by now
        fds.append(os.readlink(f"/proc/self/fd/{f}"))
    except OSError:
        pass
print("nvidia fds:", sorted(set(f for f in fds if f.startswith("/dev/nvidia"))), flush=True)
t = time.time()
while time.time() - t < float(os.environ.get("SECS", "6")):
    y = x @ x
torch.cuda.synchronize()
PY
# 1. A CUDA job under run: its GPU is used, PIDs matched.
$B/chokepoint run --view none -q --no-stacks -o rec1 --report r1.json -f json -- python3 job.py > job1.out 2> job1.err
echo "rc1=$?" >> $OUT/summary.txt
python3 - r1.json >> $OUT/summary.txt <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("job: bound", r["verdict"]["bound"], "gpu_note", r["live"]["gpu_note"], "gpus", [(g["index"], g["used"]) for g in r["live"]["gpus"]])
PY
cat job1.out >> $OUT/summary.txt
# 2. `sleep 4` beside a GPU job (another process, not in the tree): nothing used.
SECS=12 python3 job.py > bg.out 2>&1 &
BG=$!
sleep 3
$B/chokepoint run --view none -q --no-stacks -o rec2 --report r2.json -f json -- sleep 4 > s.out 2> s.err
echo "rc2=$?" >> $OUT/summary.txt
wait $BG
python3 - r2.json >> $OUT/summary.txt <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("sleep: bound", r["verdict"]["bound"], "gpu_note", r["live"]["gpu_note"], "gpus", [(g["index"], g["used"]) for g in r["live"]["gpus"]])
PY
for f in job1.err s.err bg.out; do echo "== $f"; tail -n 5 "$f"; done >> $OUT/summary.txt 2>&1
cat $OUT/summary.txt
