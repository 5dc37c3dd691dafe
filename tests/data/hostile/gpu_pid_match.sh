#!/usr/bin/env bash
# Issue 13 on the GPU machine: a CPU-only command run under `chokepoint run` while another
# process keeps the GPU busy. Before, the other job's PIDs were not in the command's tree,
# the match "failed", every GPU was judged, and the other job's load became the CPU-only
# command's verdict. Usage: tests/data/hostile/gpu_pid_match.sh BIN_DIR OUT
# (BIN_DIR as for tests/data/programs/gpu_round.sh). Writes OUT/pid_match.txt and the two
# reports (the CPU-only command beside the GPU job; the GPU job itself under run).
set -uo pipefail
bin=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
work=/tmp/pid-match; rm -rf "$work"; mkdir -p "$work"
gpu_job='import torch, time
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t = time.time()
while time.time() - t < 25:
    y = x @ x
torch.cuda.synchronize()'
cpu_job='s = 0
for i in range(60_000_000):
    s += i'
python3 -c "$gpu_job" & other=$!
sleep 6
"$bin/chokepoint" run --view none -o "$work/cpu_only.rec" --report "$out/cpu_only.report.json" -f json \
  -- python3 -c "$cpu_job" >"$work/cpu_only.out" 2>&1
echo "cpu-only beside a GPU job: exit $?" >"$out/pid_match.txt"
wait $other
"$bin/chokepoint" run --view none -o "$work/gpu_job.rec" --report "$out/gpu_job.report.json" -f json \
  -- python3 -c "$gpu_job" >"$work/gpu_job.out" 2>&1
echo "the GPU job under run: exit $?" >>"$out/pid_match.txt"
python3 - "$out" >>"$out/pid_match.txt" <<'PY'
import json, sys
for name in ("cpu_only", "gpu_job"):
    try:
        r = json.load(open(f"{sys.argv[1]}/{name}.report.json"))
    except Exception as e:
        print(name, "no report", e); continue
    v = r["verdict"]; live = r.get("live") or {}
    gpus = [(g.get("index"), g.get("used")) for g in live.get("gpus", [])]
    print(f"{name}: bound {v['bound']} confidence {v['confidence']} gpus(index, used) {gpus} "
          f"gpu_note {live.get('gpu_note')!r}\n  {v['summary']}")
PY
cat "$work/cpu_only.rec/meta.json" | python3 -c "import json,sys; m=json.load(sys.stdin); print('meta gpus', [(g['index'], g['used'], g['pids']) for g in m['gpus']], 'note', repr(m.get('gpu_note')))" >>"$out/pid_match.txt" 2>&1
cat "$out/pid_match.txt"
