#include "rules/glossary.h"

#include <fmt/format.h>

namespace chokepoint::rules {

const std::vector<GlossaryEntry>& glossary() {
  static const std::vector<GlossaryEntry> kEntries = {
      // Findings (rules/registry.cc), trace and sample rules first.
      {"input-pipeline-stall", "finding",
       "The GPU waits while the next batch is loaded: the DataLoader (or the main process loading data itself) "
       "cannot keep up with the training step.",
       "From a trace: GPU idle time attributed to DataLoader.__next__. From live samples: ticks where the GPU "
       "is starved while a loader worker or the main process is CPU-saturated. From Python stacks: the line the "
       "launching thread waits on is data loading. Reported from 5% of the step.",
       "Load in DataLoader workers (num_workers, pin_memory, persistent_workers, prefetch_factor); make "
       "per-sample preprocessing cheaper. See the remedy dataloader-workers."},
      {"launch-overhead", "finding",
       "Many short kernels: the GPU finishes each one faster than Python and the framework launch the next, so "
       "it idles between launches.",
       "From a trace: idle time between kernels while the launching thread is in launch calls, 10% of the step "
       "or more. From live samples: a starved GPU, a CPU-saturated main process, and kernels that fill almost "
       "no SM.",
       "Capture the step in CUDA Graphs (torch.compile mode=\"reduce-overhead\"), or give each kernel more "
       "work (bigger batch). Remedies cuda-graphs, bigger-batch."},
      {"host-sync", "finding",
       "Synchronizing calls (.item(), .cpu(), torch.cuda.synchronize(), a print of a CUDA tensor) drain the "
       "GPU's queue every step, so host work that could overlap GPU work runs alone.",
       "From a trace: GPU idle after synchronizing API calls, 5% of the step or more, when replaying the step "
       "without them gains enough. From Python stacks: the line the thread waits on is a sync.",
       "Keep per-step values on the GPU and read them every N steps; drop synchronize() from the loop; "
       "torch.cuda.set_sync_debug_mode(\"warn\") shows each sync. Remedy defer-syncs."},
      {"host-work", "finding",
       "The thread that launches GPU work is busy outside CUDA and the framework (Python, preprocessing, "
       "logging, metrics) while the GPU idles.",
       "From a trace: host time outside ATen/CUDA calls on the launching thread while the GPU is idle, 10% of "
       "the step or more. From live samples: a starved GPU, a CPU-saturated main process and no sign of data "
       "loading. From Python stacks: the lines it spends that time on.",
       "Move logging and metric computation off the step (every N steps, or another process); vectorize "
       "per-sample Python. Remedy move-host-work."},
      {"allocator-churn", "finding",
       "cudaMalloc/cudaFree inside the steady-state loop: the caching allocator was emptied (empty_cache) or "
       "shapes keep changing; cudaFree also synchronizes the device.",
       "From a trace: allocation or free API calls after the first step, one per step or more.",
       "Remove torch.cuda.empty_cache() from the loop; pad or bucket variable shapes; "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. Remedy no-empty-cache."},
      {"unfused-optimizer", "finding",
       "The optimizer step launches a kernel (or several) per parameter tensor (foreach=False, a hand-written "
       "update loop), which on a small or mid-size model takes longer than forward and backward.",
       "From a trace: the optimizer's kernels and launches per step, when replaying with one fused step gains "
       "at least 1.05x.",
       "torch.optim.AdamW(params, fused=True) (Adam, SGD, Adagrad have it too). Remedy fused-optimizer."},
      {"pageable-memcpy", "finding",
       "Host<->device copies from or to pageable memory: the driver stages them through a pinned buffer at a "
       "fraction of the link's speed and the host blocks.",
       "From a trace: memcpy events marked pageable, 1% of the step or more. From live samples: a starved GPU, "
       "a CPU-saturated main process and PCIe far below the link.",
       "Pin the host tensors (pin_memory()) and copy with .to(device, non_blocking=True). Remedy pinned-copies."},
      {"transfer-bound", "finding",
       "Host<->device copies that no kernel overlaps take a large part of the step, or run near the link's "
       "ceiling.",
       "From a trace: exposed copy time, a fifth of the step or more, or copies at 80% of the link's achievable "
       "rate.",
       "Copy less (keep data on the GPU, smaller dtypes), overlap copies with compute (pinned, non_blocking, "
       "a side stream); when the link is saturated pinning no longer helps. Remedy pinned-copies when some "
       "copies are pageable."},
      {"no-tensor-cores", "finding",
       "FP32 matrix work (GEMM, convolution) on a GPU with tensor cores: TF32 or bf16/fp16 mixed precision "
       "would run it several times faster.",
       "From a trace: FP32 SIMT matrix kernels, 5% of the step or more. From live samples (GPM): SMs busy, "
       "tensor cores idle, DRAM not the limit.",
       "TF32: torch.backends.cuda.matmul.fp32_precision = \"tf32\" (PyTorch 2.9 and later; before, "
       "torch.backends.cuda.matmul.allow_tf32 = True), or torch.autocast(\"cuda\", dtype=torch.bfloat16). "
       "Remedies tf32, autocast-bf16."},
      {"memory-bound-elementwise", "finding",
       "Unfused elementwise, normalization and reduction kernels take a large share of the step; each reads and "
       "writes its tensors through HBM.",
       "From a trace: fusible kernel time, a fifth of the step or more, with their bytes against the HBM "
       "bandwidth.",
       "model = torch.compile(model), fused blocks (scaled_dot_product_attention, fused norms). Remedy "
       "torch-compile."},
      {"memory-bound-matmul", "finding",
       "Matrix products below the ridge point of their precision (skinny GEMMs: decoding, batch-1 inference, "
       "small batches) stream their weights from HBM: memory bandwidth, not the tensor cores, sets their speed.",
       "From a trace with shapes: GEMM FLOPs per byte under the GPU's ridge point, a fifth of the step or more.",
       "Batch more rows per product (bigger batch, batched requests), lower-precision weights. Remedy "
       "bigger-batch."},
      {"nchw-layout", "finding",
       "A half-precision convnet runs in NCHW: cuDNN wraps its NHWC convolutions in layout transposes and NCHW "
       "batch norm and pooling kernels are much slower than their channels_last versions.",
       "From a trace: layout transpose kernels and NCHW norm/pool kernels around half-precision convolutions, "
       "when replaying in channels_last gains at least 1.05x.",
       "model.to(memory_format=torch.channels_last) and the same for each batch. Remedy channels-last."},
      {"low-occupancy", "finding",
       "Kernels launched with fewer blocks than the GPU has SMs leave most of the chip idle while they run.",
       "From a trace: kernels whose grid is smaller than one wave, 5% of the step or more.",
       "Size grids from the problem or as a multiple of the SM count; batch skinny GEMMs. Remedy full-grid."},
      {"smi-util-misleading", "finding",
       "nvidia-smi utilization is high while few SMs work: that counter is the share of time any kernel ran, "
       "however small, so a job of small kernels reads 100% on a mostly empty GPU.",
       "From live samples with GPM (Hopper and newer): utilization 80% or more while SM activity is at most "
       "half.",
       "Judge the GPU by SM activity, not utilization; give kernels more work (bigger batch, fusion, CUDA "
       "Graphs)."},
      {"pcie-saturated", "finding",
       "PCIe host->GPU or GPU->host traffic runs near the link's ceiling, so copies, not the GPU, set the pace "
       "while they run.",
       "From live samples: NVML PCIe RX or TX at 80% of the link's theoretical rate or more.",
       "Copy less (keep data on the GPU, decode on the GPU, smaller dtypes) and overlap the rest with compute."},
      {"pcie-link-degraded", "finding",
       "The GPU's PCIe link runs below the generation or width that the GPU and slot support (a bad riser, a "
       "wrong slot, a BIOS setting), so every copy is slower.",
       "From live samples: the best link seen while the GPU worked stays below its maximum (links drop at idle "
       "to save power, so idle time is not judged). doctor reads the same from NVML.",
       "Reseat the card or move it to a full x16 slot, check the BIOS PCIe settings and risers; "
       "chokepoint doctor shows the link."},
      {"clock-throttled", "finding",
       "The SM clock is held down while the GPU works: thermal or hardware slowdown (too hot, power brake) is a "
       "fault; the software power cap is normal under full load.",
       "From live samples and doctor: NVML clock event reasons while the GPU is active (slowdowns from a "
       "twentieth of the time, the power cap from a fifth when the GPU is not busy).",
       "Check cooling, airflow and power supply (nvidia-smi -q -d PERFORMANCE); raise a lowered power limit."},
      {"gpu-memory-near-full", "finding",
       "Device memory in use reached 95% of its size: the next larger batch or sequence ends in out-of-memory, "
       "and allocator retries slow steps down.",
       "From live samples: NVML memory used against total.",
       "Leave headroom: smaller batch with gradient accumulation, activation checkpointing, bf16; "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation."},
      {"host-swapping", "finding",
       "The host pages memory to swap, or tasks stall waiting for memory: a DataLoader that touches swapped-out "
       "pages waits on the disk for every batch.",
       "From live samples: swap-in/out of 256 pages/s or more, or PSI memory pressure of 10%; doctor: swap "
       "used since boot.",
       "Use less host memory (fewer or lighter workers, no dataset copies per worker, shared memory) or add "
       "RAM."},
      {"cpu-oversubscribed", "finding",
       "More runnable threads than CPUs: the job's threads wait in the run queue, usually every DataLoader "
       "worker running intra-op thread pools on all cores.",
       "From live samples: the tree's threads waited for a CPU a fifth as long as they ran (schedstat), judged "
       "while the tree uses at least half a core.",
       "Set OMP_NUM_THREADS / torch.set_num_threads(1) in workers (worker_init_fn), fewer workers, or "
       "more CPUs."},
      {"gil-contention", "finding",
       "Several Python threads of one process are busy but together use about one core: they take turns "
       "holding the GIL.",
       "From live samples: per-thread CPU of the process's Python threads; from Python stacks: time the "
       "threads spend waiting for the GIL.",
       "Move the CPU work into processes (DataLoader workers, multiprocessing) or native code that releases "
       "the GIL. Remedy processes-not-threads."},
      {"io-wait", "finding", "The workload waits on storage: tasks stall on I/O while the job reads its data.",
       "From live samples: PSI io pressure of 10%, iowait above 5% of the CPUs, tasks in uninterruptible "
       "sleep, while the tree reads.",
       "Faster or local storage, cache the dataset in RAM or on local NVMe, larger sequential reads, more "
       "prefetching workers."},
      {"cpu-steal", "finding",
       "The hypervisor runs other guests on this VM's CPUs; the job loses that time on every thread.",
       "From live samples: steal above 5% of the CPUs for a tenth of the run.",
       "Move to a dedicated or larger instance; ask the provider about the host."},
      {"numa-mismatch", "finding",
       "A process of the job is pinned to CPUs far from its GPU (another NUMA node or socket): its copies and "
       "pinned buffers cross the socket link.",
       "From live samples and doctor: the process's allowed CPUs against the GPU's local CPUs (less than half "
       "near the GPU).",
       "Pin each rank to its GPU's NUMA node (numactl --cpunodebind=N --membind=N, or the launcher's CPU "
       "affinity)."},
      {"nvidia-driver", "finding", "No NVIDIA driver, or no GPU visible to this process.",
       "doctor: NVML loads and reports at least one GPU.",
       "Install the driver; check CUDA_VISIBLE_DEVICES and the container's GPU access (--gpus)."},
      {"cuda-compat", "finding",
       "PyTorch was built for a newer CUDA than the driver supports, so it cannot use the GPU (or runs in "
       "compatibility mode).",
       "doctor: the CUDA version of the installed PyTorch against the driver's.",
       "Update the driver, or install the PyTorch build for the driver's CUDA version."},
      {"gpu-access", "finding", "A GPU does not answer NVML queries (lost, fallen off the bus, or not permitted).",
       "doctor: NVML queries on each GPU.",
       "Check dmesg for Xid errors, reset or reboot; check device permissions in containers."},
      {"persistence-mode", "finding",
       "Persistence mode is off: the driver tears the GPU down when no process uses it, so each start pays "
       "the initialization again.",
       "doctor: NVML persistence mode.", "nvidia-smi -pm 1, or run nvidia-persistenced."},
      {"memory-errors", "finding",
       "ECC is off, or the GPU reports uncorrectable memory errors or pending/failed row remapping: results "
       "can be wrong and the GPU may need a reset or service.",
       "doctor: NVML ECC mode, error counters, row remapping and page retirement.",
       "Reset the GPU to apply pending remaps; contact the vendor for failed remapping; enable ECC."},
      {"gpu-shared", "finding", "Other processes run on the GPU and take its time and memory.",
       "doctor: NVML's list of compute processes on each GPU.",
       "Stop them or move the job to a free GPU (CUDA_VISIBLE_DEVICES)."},
      {"gpm-metrics", "finding",
       "GPM (SM, tensor and DRAM activity) is not available: live verdicts on a busy GPU cannot tell compute "
       "from memory and are less confident.",
       "doctor: NVML GPM support (Hopper and newer).",
       "Nothing to fix on older GPUs; on Hopper update the driver. Use a trace (torch.profiler or run --trace) "
       "for the detail."},
      {"cpu-governor", "finding",
       "The CPU frequency governor is not performance: launches and data loading run on slower or waking "
       "cores.",
       "doctor: /sys/devices/system/cpu/*/cpufreq/scaling_governor.",
       "cpupower frequency-set -g performance (or the BIOS power profile)."},
      {"transparent-hugepages", "finding",
       "Transparent huge pages are off, or defrag is 'always' (stalls on allocation).",
       "doctor: /sys/kernel/mm/transparent_hugepage/enabled and defrag.",
       "enabled = always or madvise, defrag = madvise or defer."},
      {"memlock", "finding",
       "The locked-memory limit is low: NCCL and pinned buffers of multi-GPU jobs fail or fall back to "
       "slower paths.",
       "doctor: ulimit -l (RLIMIT_MEMLOCK) against 1 GiB.",
       "ulimit -l unlimited (limits.conf, or the container's --ulimit memlock=-1)."},
      {"dev-shm", "finding",
       "/dev/shm is small or full: DataLoader workers pass batches through shared memory and fail with bus "
       "errors.",
       "doctor: size and free space of /dev/shm against 1 GiB.",
       "Mount a larger /dev/shm (docker --shm-size, or --ipc=host)."},

      // Remedies (rules/remedies.h).
      {"cuda-graphs", "remedy",
       "Capture the step in CUDA Graphs: each kernel replays from the graph instead of a Python launch.",
       "Suggested by launch-overhead; its gain is the step replayed with the launches from a graph.",
       "torch.compile(model, mode=\"reduce-overhead\"), or torch.cuda.make_graphed_callables with static "
       "shapes."},
      {"autocast-bf16", "remedy",
       "Train in bf16 mixed precision: matrix work runs on the tensor cores at several times the FP32 rate.",
       "Suggested by no-tensor-cores; its gain is the step replayed with matrix kernels at the bf16 ceiling.",
       "with torch.autocast(\"cuda\", dtype=torch.bfloat16): around the forward pass and the loss."},
      {"tf32", "remedy", "Let FP32 matmuls use TF32 tensor cores, with no other change of code.",
       "Suggested by no-tensor-cores; its gain is the step replayed with FP32 GEMMs at the TF32 ceiling.",
       "torch.backends.cuda.matmul.fp32_precision = \"tf32\" at start-up on PyTorch 2.9 and later (the "
       "allow_tf32 flags warn there); torch.backends.cuda.matmul.allow_tf32 = True before 2.9."},
      {"dataloader-workers", "remedy",
       "Load batches in DataLoader worker processes so the next batch is ready when the step ends.",
       "Suggested by input-pipeline-stall; its gain is the step replayed with the loading time overlapped.",
       "DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=4)."},
      {"pinned-copies", "remedy",
       "Copy from pinned memory without blocking, at the link's speed and overlapped with compute.",
       "Suggested by pageable-memcpy and transfer-bound; its gain is the step replayed with pinned copy rates.",
       "x.pin_memory() or DataLoader(pin_memory=True), then .to(device, non_blocking=True)."},
      {"defer-syncs", "remedy", "Stop synchronizing every step, so the host queues work ahead of the GPU.",
       "Suggested by host-sync; its gain is the step replayed without the per-step syncs.",
       "Accumulate per-step values as GPU tensors and call .item() every N steps; no synchronize() in the "
       "loop."},
      {"torch-compile", "remedy",
       "Fuse chains of elementwise kernels into one, removing their HBM round trips and launches.",
       "Suggested by memory-bound-elementwise; its gain is the step replayed with fusible chains merged.",
       "model = torch.compile(model), or compile the hot function."},
      {"bigger-batch", "remedy",
       "Raise the batch size so each kernel does more work per launch and per weight read. It changes what is "
       "trained, so it is never the headline while another remedy gains 1.05x.",
       "Suggested by memory-bound-matmul, launch-overhead and low-occupancy; its gain is samples per second "
       "at 4x the batch.",
       "4x the samples per step (scale the learning rate, or fewer accumulation steps); batch requests in "
       "inference."},
      {"fused-optimizer", "remedy", "One fused kernel for the optimizer step instead of one or more per parameter.",
       "Suggested by unfused-optimizer; its gain is the step replayed with one fused optimizer kernel.",
       "torch.optim.AdamW(params, fused=True)."},
      {"channels-last", "remedy", "Run the convnet in channels_last (NHWC), the layout tensor-core convolutions use.",
       "Suggested by nchw-layout; its gain is the step replayed without the transposes and with NHWC norms.",
       "model.to(memory_format=torch.channels_last) and each batch too."},
      {"no-empty-cache", "remedy", "Keep the caching allocator warm: no cudaMalloc/cudaFree in the steady state.",
       "Suggested by allocator-churn; its gain is the step replayed without the allocation calls.",
       "Remove torch.cuda.empty_cache() from the loop; pad or bucket shapes."},
      {"full-grid", "remedy", "Launch at least one block per SM so a kernel fills the GPU.",
       "Suggested by low-occupancy; its gain is the step replayed with sub-wave kernels spread over all SMs.",
       "Size grids from the problem (triton.cdiv(n, BLOCK)) or as a multiple of the SM count."},
      {"move-host-work", "remedy", "Take per-step Python (logging, metrics, preprocessing) off the critical path.",
       "Suggested by host-work; its estimate is an upper bound: all of that host time off the step.",
       "Find the hot lines (Python stacks in the report, py-spy, torch.profiler with_stack=True); do the "
       "work every N steps or in another process."},
      {"processes-not-threads", "remedy",
       "Move CPU-bound Python work from threads to processes, which do not share one GIL.",
       "Suggested by gil-contention; not estimated.",
       "DataLoader workers, multiprocessing, or native code that releases the GIL."},

      // Verdict categories (rules/finding.h).
      {"input", "verdict", "The step is limited by loading data: the GPU waits for the next batch.",
       "The largest cost is GPU idle time while the DataLoader produces a batch (trace), or the starved GPU "
       "explained by loader or main-process CPU saturation (samples).",
       "See input-pipeline-stall and the remedy dataloader-workers."},
      {"host", "verdict", "The step is limited by the CPU side: launches, Python, optimizer bookkeeping, scheduling.",
       "The largest cost is GPU idle time while the launching thread is busy (launch overhead, host work, "
       "allocator calls, an unfused optimizer).",
       "See the host findings in the report (launch-overhead, host-work, ...)."},
      {"sync", "verdict", "The step is limited by host-device synchronizations that serialize CPU and GPU.",
       "The largest cost is GPU idle time after synchronizing calls; a serialized pipeline reads sync even when "
       "its compute time is close.",
       "See host-sync and the remedy defer-syncs."},
      {"transfer", "verdict", "The step is limited by host<->device copies.",
       "The largest cost is copy time no kernel overlaps (trace), or PCIe near its ceiling (samples).",
       "See pageable-memcpy, transfer-bound, pcie-saturated."},
      {"compute", "verdict",
       "The GPU's arithmetic is the limit: kernels at or above the ridge point keep it busy most of the step.",
       "The GPU is busy most of the step and the largest busy class is compute-bound matrix or other work.",
       "Use lower precision (tf32, autocast-bf16) if not already; else the GPU is well used: fewer FLOPs or "
       "more GPUs."},
      {"memory", "verdict", "The GPU's memory bandwidth is the limit: kernels move bytes more than they compute.",
       "The GPU is busy most of the step and the largest busy class is memory-bound (elementwise, matmuls "
       "below the ridge point), or GPM DRAM activity is 60% or more (samples).",
       "Fuse kernels (torch-compile), batch skinny GEMMs (bigger-batch), lower precision."},
      {"communication", "verdict", "Collectives (NCCL all-reduce, all-gather ...) take the most step time.",
       "The largest busy class is communication kernels.",
       "Overlap communication with compute (DDP bucket sizes, FSDP prefetch), compress or reduce less often."},
      {"io", "verdict", "The job waits on storage.",
       "From samples: io-wait (PSI io, iowait) or host-swapping explains the GPU's idle time.",
       "See io-wait and host-swapping."},
      {"idle", "verdict",
       "The GPU had nothing queued and nothing recorded says why: the job was doing something else (start-up, "
       "evaluation, waiting on another process).",
       "The largest cost is GPU idle time no cause in the trace or samples explains, with the job's processes "
       "recorded.",
       "Look at what the job did in that time (Python stacks, a torch.profiler trace with with_stack=True)."},
      {"unknown", "verdict", "The evidence cannot say what limits the job; the report gives the reason.",
       "A trace without GPU work, idle time nothing recorded explains, or samples without GPU metrics where "
       "nothing on the host stands out.",
       "Record more: a torch.profiler trace, run --trace, or run with the GPU's driver present."},
  };
  return kEntries;
}

const GlossaryEntry* find_glossary_entry(std::string_view id) {
  for (const auto& e : glossary()) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

namespace {

// `text` wrapped at `width` columns, each line indented by `indent`.
std::string wrap(std::string_view text, size_t indent, size_t width = 88) {
  std::string out, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
    pos = end + 1;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

}  // namespace

std::string format_glossary_entry(const GlossaryEntry& e) {
  const bool remedy = e.kind == "remedy";
  std::string out = fmt::format("{} ({})\n", e.id, e.kind);
  out += "  What it means:\n" + wrap(e.meaning, 4);
  out += std::string(remedy ? "  When it is suggested, how it is estimated:\n" : "  How it is detected:\n") +
         wrap(e.detection, 4);
  out += std::string(remedy ? "  The change:\n" : "  What to do:\n") + wrap(e.action, 4);
  return out;
}

std::string format_glossary_index() {
  std::string out;
  for (std::string_view kind : {"finding", "remedy", "verdict"}) {
    std::string ids;
    for (const auto& e : glossary()) {
      if (e.kind != kind) continue;
      if (!ids.empty()) ids += ' ';
      ids += e.id;
    }
    const char* title = kind == "finding" ? "Findings" : kind == "remedy" ? "Remedies" : "Verdicts";
    out += fmt::format("{}:\n{}", title, wrap(ids, 2));
  }
  out += "Run 'chokepoint explain ID' for what an id means, how it is detected and what to do.\n";
  return out;
}

}  // namespace chokepoint::rules
