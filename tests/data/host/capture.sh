#!/usr/bin/env bash
# Captures the host files `chokepoint doctor` reads into a fixture directory, so the
# doctor tests can replay this machine (doctor --host-root DIR). Usage:
#   tests/data/host/capture.sh tests/data/host/NAME [GPU_SYSFS_BUS_ID ...]
# GPU_SYSFS_BUS_ID is the GPU's PCI address as sysfs spells it (0000:3b:00.0); its
# numa_node and local_cpulist are copied. proc/self/* are captured from `cat`, which has
# the same CPU affinity and limits as this shell.
set -euo pipefail
dest=${1:?usage: capture.sh DEST [BUS_ID ...]}
shift
copy() {  # copy SRC into DEST keeping the path
  [ -r "$1" ] || return 0
  mkdir -p "$dest/$(dirname "$1")"
  cat "$1" > "$dest/$1"
}
copy /proc/meminfo
copy /proc/vmstat
copy /sys/kernel/mm/transparent_hugepage/enabled
copy /sys/kernel/mm/transparent_hugepage/defrag
copy /sys/devices/system/node/online
copy /sys/devices/system/cpu/online
for gov in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do copy "$gov"; done
for bdf in "$@"; do
  copy "/sys/bus/pci/devices/$bdf/numa_node"
  copy "/sys/bus/pci/devices/$bdf/local_cpulist"
done
mkdir -p "$dest/proc/self"
cat /proc/self/status > "$dest/proc/self/status"
cat /proc/self/limits > "$dest/proc/self/limits"
# statvfs(3) of /dev/shm: PATH TOTAL_BYTES AVAILABLE_BYTES (see src/machine/host_inputs.h)
if [ -d /dev/shm ]; then
  read -r bsize blocks avail < <(stat -f -c '%S %b %a' /dev/shm)
  echo "/dev/shm $((bsize * blocks)) $((bsize * avail))" > "$dest/statvfs.txt"
fi
echo "captured into $dest"
