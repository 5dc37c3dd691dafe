#!/usr/bin/env bash
# `chokepoint serve` on a real GPU while a bf16 GEMM loop (PyTorch) runs: two scrapes of
# /metrics, the serve log and nvidia-smi's view, saved in OUT. The exposition is checked
# with promtool on the build machine (the GPU machine has no promtool); the saved scrape is
# the fixture tests/data/serve/h200_gemm.prom.
#
# Usage: tests/data/serve/gpu_serve.sh OUT [BINDIR]
#   BINDIR holds the packaged chokepoint and its libraries (scripts/gpu_check.sh package);
#   default .devbin/serve16. Recorded on the H200 with:
#   run(carry [".devbin"]): bash .devbin/serve16/gpu_serve.sh $OUT .devbin/serve16
set -u
out=${1:?usage: gpu_serve.sh OUT [BINDIR]}
bin=${2:-.devbin/serve16}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

python3 - > "$out/gemm.log" 2>&1 <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 45
n = 0
t0 = time.time()
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    n += 20
    if n % 400 == 0:
        dt = time.time() - t0
        print(f"{n} GEMMs, {2 * 8192**3 * n / dt / 1e12:.0f} TFLOP/s", flush=True)
PY
gemm=$!
sleep 6  # CUDA initialisation, first GEMMs

"$bin/chokepoint" serve --listen 127.0.0.1:0 --interval 500ms --diagnose-every 2s --window 30s \
  2> "$out/serve.err" &
serve=$!
url=""
for _ in $(seq 50); do
  url=$(grep -o 'http://[^ ]*' "$out/serve.err" 2>/dev/null | head -1)
  [ -n "$url" ] && break
  sleep 0.2
done
echo "url=$url" > "$out/summary.txt"
scrape() { python3 -c "import sys,urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())" "$url"; }
sleep 12
scrape > "$out/scrape1.prom" 2>> "$out/summary.txt"
sleep 10
scrape > "$out/scrape2.prom" 2>> "$out/summary.txt"
nvidia-smi --query-gpu=index,name,uuid,utilization.gpu,memory.used,power.draw,clocks.sm,temperature.gpu \
  --format=csv > "$out/nvidia_smi.csv" 2>&1
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >> "$out/nvidia_smi.csv" 2>&1
echo "gemm_pid=$gemm" >> "$out/summary.txt"
start=$(date +%s.%N)
kill -TERM "$serve"
wait "$serve"
echo "serve_exit=$? after SIGTERM in $(python3 -c "import time; print(round(time.time() - $start, 3))") s" >> "$out/summary.txt"
kill "$gemm" 2> /dev/null
wait "$gemm" 2> /dev/null
cat "$out/summary.txt"
