#!/bin/bash
# Records the ncu fixtures of tests/data/kernels on the GPU machine:
#   bash tests/data/kernels/gpu_ncu.sh OUT
# ncu 2025.3 with --clock-control none (the clocks the job really runs at).
set -u
out=$1
here=$(dirname "$0")
work=$(mktemp -d)
nvcc -O2 -arch=sm_90 -o "$work/ncu_kernels" "$here/ncu_kernels.cu" -lcublas || exit 1
ncu --version > "$out/ncu_version.txt" 2>&1
ncu --query-metrics --chip gh100 > "$work/metrics.txt" 2>&1
grep -E -i "tensor|flop|_op_(h|f|d)(fma|add|mul)|dram__bytes|occupancy|warps_active|launch__" "$work/metrics.txt" \
  > "$out/query_metrics_subset.txt"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__sass_thread_inst_executed_op_fadd_pred_on.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__occupancy_limit_blocks,launch__occupancy_limit_warps
ncu --clock-control none --csv --page raw --metrics "$metrics" "$work/ncu_kernels" \
  > "$out/raw_metrics.csv" 2> "$out/raw_metrics.err"
ncu --clock-control none --set full --launch-skip 4 --launch-count 4 -o "$work/full" "$work/ncu_kernels" \
  > "$work/full.log" 2>&1
ncu --import "$work/full.ncu-rep" --csv --page raw > "$out/full_raw.csv" 2>&1
ncu --import "$work/full.ncu-rep" --csv --page details > "$out/full_details.csv" 2>&1
# A user without profiling permission (the driver's default restricts counters to admins).
useradd -m ncuuser 2>/dev/null; chmod -R a+rx "$work"
su ncuuser -s /bin/bash -c "ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum -k regex:axpy -c 1 $work/ncu_kernels" \
  > "$out/nonroot.txt" 2>&1; echo "rc=$?" >> "$out/nonroot.txt"
cat "$work/full.log" >> "$out/raw_metrics.err"
gzip -9 "$out/full_raw.csv" "$out/full_details.csv"
ls -la "$out"
