#!/usr/bin/env bash
# Captures the /proc files the live sampler reads (src/sampler/proc) into fixture roots,
# twice, one second apart, so tests can check parsed values and the rates between them:
#   DEST/t0/proc/...  DEST/t1/proc/...
# The process tree is a known workload started here: a python3 with 3 threads spinning
# in pure Python (the GIL-contention signature of docs/FORMATS.md "/proc") and one child
# process that sleeps. Usage: tests/data/proc/capture.sh tests/data/proc/dev_vm
# environ is not captured (it may hold secrets); tests that need RANK write their own.
set -euo pipefail
dest=${1:?usage: capture.sh DEST}

python3 - <<'PY' &
import os, subprocess, threading, time
child = subprocess.Popen(["sleep", "30"])
def spin():
    end = time.time() + 30
    while time.time() < end:
        pass
for _ in range(3):
    threading.Thread(target=spin, daemon=True).start()
time.sleep(30)
child.kill()
PY
root=$!
trap 'kill $root 2>/dev/null || true' EXIT
sleep 2  # let the threads and the child start
child=$(cat /proc/$root/task/*/children 2>/dev/null || true)
[ -n "$child" ] || child=$(awk -v p="$root" '{ if ($4 == p) print $1 }' /proc/[0-9]*/stat 2>/dev/null | head -1)

copy() {  # copy SRC into ROOT keeping the path; unreadable files are left out
  local root=$1 src=$2
  [ -r "$src" ] || return 0
  mkdir -p "$root/$(dirname "$src")"
  cat "$src" > "$root/$src" 2>/dev/null || rm -f "$root/$src"
}

snapshot() {
  local out=$1
  rm -rf "$out"
  for f in stat vmstat diskstats meminfo pressure/cpu pressure/memory pressure/io; do copy "$out" "/proc/$f"; done
  for pid in $root $child; do
    for f in stat status schedstat io cmdline; do copy "$out" "/proc/$pid/$f"; done
    for task in /proc/$pid/task/*; do
      for f in stat status schedstat; do copy "$out" "$task/$f"; done
    done
  done
}
snapshot "$dest/t0"
sleep 1
snapshot "$dest/t1"
echo "root $root child $child" > "$dest/pids.txt"
echo "captured into $dest (root pid $root, child $child)"
