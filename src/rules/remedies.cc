#include "rules/remedies.h"

namespace chokepoint::rules {

using analyses::whatif::Remedy;

const std::vector<RemedyInfo>& all_remedies() {
  static const std::vector<RemedyInfo> kAll = {
      {"cuda-graphs", "Capture the step in CUDA Graphs",
       "torch.compile(model, mode=\"reduce-overhead\"), or torch.cuda.make_graphed_callables(model, (x,)) / "
       "torch.cuda.graphs with static shapes: each kernel then replays from the graph instead of a Python "
       "launch.",
       Remedy::kCudaGraphs},
      {"autocast-bf16", "Train in bf16 mixed precision",
       "with torch.autocast(\"cuda\", dtype=torch.bfloat16): around the forward pass and the loss (bf16 needs "
       "no GradScaler); keep GEMM dimensions multiples of 8.",
       Remedy::kAutocastBf16},
      {"tf32", "Let FP32 matmuls use TF32 tensor cores",
       // PyTorch 2.9 added the fp32_precision settings and warns on the allow_tf32 flags
       // (docs.pytorch.org/docs/2.9/notes/cuda.html, "TensorFloat-32 (TF32) on Ampere (and
       // later) devices"). Kineto traces carry no PyTorch version, so both are given.
       "at start-up, on PyTorch 2.9 and later torch.backends.cuda.matmul.fp32_precision = \"tf32\" (the "
       "allow_tf32 flags warn there); before 2.9 torch.backends.cuda.matmul.allow_tf32 = True. Convolutions "
       "already use TF32 unless it was turned off (torch.backends.cudnn.conv.fp32_precision, or "
       "torch.backends.cudnn.allow_tf32 before 2.9).",
       Remedy::kTf32},
      {"dataloader-workers", "Load batches in DataLoader workers",
       "DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=4) with N up "
       "to the free cores, and .to(device, non_blocking=True) in the loop.",
       Remedy::kLoaderWorkers},
      {"prefetch-batches", "Make the next batch while the GPU runs this one",
       "The loop makes its batches itself (no DataLoader): wrap that code in a torch.utils.data.IterableDataset "
       "read by a DataLoader(num_workers=N, pin_memory=True), or make batch k+1 in a background thread (a queue "
       "of 2-4 batches) while step k runs, and copy with .to(device, non_blocking=True).",
       std::nullopt, false, true},
      {"pinned-copies", "Copy from pinned memory without blocking",
       "Pin the host tensors once (x = x.pin_memory(), or DataLoader(pin_memory=True)) and copy with "
       ".to(device, non_blocking=True).",
       Remedy::kPinnedCopies},
      {"defer-syncs", "Stop synchronizing every step",
       "Keep per-step values on the GPU (accumulate loss/accuracy as tensors) and call .item()/.cpu() every N "
       "steps; drop torch.cuda.synchronize() from the loop; torch.cuda.set_sync_debug_mode(\"warn\") shows "
       "each sync.",
       Remedy::kDeferSyncs},
      {"torch-compile", "Fuse elementwise chains with torch.compile",
       "model = torch.compile(model) (or compile the hot function); use fused blocks "
       "(F.scaled_dot_product_attention, fused norms).",
       Remedy::kCompileFusion},
      {"bigger-batch",
       "Raise the batch size",
       "Process 4x the samples per step (scale the learning rate, or take fewer gradient-accumulation steps); "
       "for inference, batch requests together.",
       Remedy::kBiggerBatch,
       true,
       false,
       {},
       "samples per second"},
      {"fused-optimizer", "Use the fused optimizer",
       "torch.optim.AdamW(params, fused=True) (Adam, SGD and Adagrad have it too) instead of foreach=False or "
       "a hand-written update loop.",
       Remedy::kFusedOptimizer},
      {"channels-last", "Run the convnet in channels_last",
       "model = model.to(memory_format=torch.channels_last) and x = x.to(memory_format=torch.channels_last) "
       "for each batch (with autocast).",
       Remedy::kChannelsLast},
      {"no-empty-cache", "Keep the caching allocator warm",
       "Remove torch.cuda.empty_cache() from the loop; pad or bucket variable shapes; set "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.",
       Remedy::kNoEmptyCache},
      {"full-grid", "Launch at least one block per SM",
       "Size custom kernels' grids from the problem (triton.cdiv(n, BLOCK)) or as a multiple of the SM count "
       "with a grid-stride loop; batch skinny GEMMs (torch.bmm).",
       Remedy::kFullGrid},
      {"fix-straggler", "Remove the straggler's own bottleneck",
       "Fix what makes the late rank late (its finding in this report: data loading, host work, a slower or "
       "throttled GPU); give it the same batch shapes as the others (bucket sequence lengths), move logging and "
       "checkpointing off it or onto every rank equally, and check its GPU's clocks and PCIe link (chokepoint doctor).",
       Remedy::kFixStraggler},
      {"overlap-communication", "Overlap the collectives with the backward pass",
       "DDP: keep overlap on (no find_unused_parameters unless needed; static_graph=True), tune "
       "bucket_cap_mb (smaller buckets start the all-reduce earlier, larger ones run it faster), "
       "gradient_as_bucket_view=True; FSDP: forward_prefetch=True and backward_prefetch=BACKWARD_PRE; "
       "NCCL_ALGO/NCCL_PROTO only after measuring.",
       Remedy::kOverlapComm},
      {"accumulate-no-sync", "Accumulate gradients under no_sync()",
       "Run k micro-batches per optimizer step and wrap all but the last in `with ddp.no_sync():` (FSDP: "
       "no_sync(), or set_requires_gradient_sync(False)): the gradients are all-reduced once per k micro-steps.",
       Remedy::kAccumulateNoSync, true},
      {"move-host-work", "Take per-step Python off the critical path",
       "Find the hot lines (py-spy record -o profile.svg -- python train.py, or torch.profiler with "
       "with_stack=True); log and compute metrics every N steps or in a background process; vectorize "
       "per-sample Python.",
       std::nullopt, false, true,
       "At the lines the finding names: log and compute metrics every N steps or in a background process; "
       "replace Python loops over tensors (per-parameter updates, per-sample work) with torch._foreach_* ops "
       "or one batched op; the model's own Python between small ops (modules' forward, autograd) goes with "
       "CUDA graphs or torch.compile."},
      {"processes-not-threads", "Move CPU work from threads to processes",
       "Run Python-heavy work in processes (DataLoader num_workers, multiprocessing) or native code that "
       "releases the GIL; fewer Python threads beside the training loop.",
       // Its only figure is the host work's bound: the gain does not follow the GIL wait
       // share (1.4x at 52%, 850x at 87% on the H200, docs/VALIDATION.md).
       std::nullopt, false, true},
  };
  return kAll;
}

const RemedyInfo* find_remedy(std::string_view id) {
  for (const auto& r : all_remedies()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

const RemedyInfo* find_remedy(Remedy w) {
  for (const auto& r : all_remedies()) {
    if (r.what_if && *r.what_if == w) return &r;
  }
  return nullptr;
}

}  // namespace chokepoint::rules
