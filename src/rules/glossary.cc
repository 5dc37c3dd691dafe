#include "rules/glossary.h"

#include <cctype>
#include <string>

#include <fmt/format.h>

#include "rules/metric_glossary.h"
#include "rules/rule.h"

namespace chokepoint::rules {

namespace {

// Remedies and verdict categories; the findings' entries live with their rules.
const std::vector<GlossaryEntry>& other_entries() {
  static const std::vector<GlossaryEntry> kEntries = {
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
      {"prefetch-batches", "remedy",
       "Make the next batch while the GPU runs this one, where the loop makes its batches itself (no DataLoader).",
       "Suggested by input-pipeline-stall when the Python stacks hold the wait outside torch.utils.data; its "
       "estimate is an upper bound: all of the batch making off the step.",
       "The batch code in an IterableDataset read by DataLoader(num_workers=N, pin_memory=True), or a background "
       "thread filling a queue of 2-4 batches."},
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
      {"fix-straggler", "remedy", "Remove what makes the straggler rank late: its input, host work or slower GPU.",
       "Suggested by straggler-rank; its gain is the step without the other ranks' wait for it (the most they "
       "wait with no compute beside it, per step).",
       "Fix the straggler's own finding; balance shapes and work per rank; check its GPU (chokepoint doctor)."},
      {"overlap-communication", "remedy", "Run the collectives under the backward pass instead of after it.",
       "Suggested by exposed-communication; its gain is the step without the exposed collectives, never "
       "shorter than its compute or its communication.",
       "DDP bucket_cap_mb, static_graph, gradient_as_bucket_view; FSDP forward/backward prefetch."},
      {"accumulate-no-sync", "remedy", "All-reduce the gradients once per several micro-batches.",
       "Suggested by exposed-communication; its gain is the step with 3 in 4 exposed all-reduces gone "
       "(4 micro-steps per optimizer step). Changes the training: listed, never the headline first.",
       "Wrap all but the last micro-batch of an optimizer step in `with ddp.no_sync():`."},
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
      // Words the reports print that are not ids of the above (issue 44: `explain` rejected
      // them). The idle causes input, sync, launch_overhead and host_work are the verdicts
      // and findings of those names.
      {"confidence", "term",
       "How far the verdict can be trusted, 0 to 1: the evidence's agreement, lowered by the share of input lost "
       "or unreadable.",
       "From the margin of the largest cost over the next, the sources that agree (trace, samples, stacks) and "
       "the data lost (a cut trace, ticks out of order).",
       "Below 0.5 the report says why; record more (a longer run, a trace) before acting on the verdict alone."},
      {"allocator", "term",
       "GPU idle time while the host was in cudaMalloc/cudaFree (the caching allocator growing or emptied).",
       "Idle gaps whose host side is an allocator call (breakdown.idle_by_cause).",
       "See allocator-churn: keep the cache (no empty_cache in the loop), fixed shapes, or expandable segments."},
      {"gpu-wait", "term", "GPU idle time while the host waited on another stream or event of the GPU itself.",
       "Idle gaps whose host side is a stream or event wait (breakdown.idle_by_cause).",
       "Overlap the waited-on work (more streams, fewer cross-stream dependencies)."},
      {"nothing-queued", "term", "GPU idle time with nothing launched and no host call recorded to explain it.",
       "Idle gaps with no launch, sync or known host work around them (breakdown.idle_by_cause).",
       "See the idle verdict: look at what the job did then (Python stacks)."},
      // The kernel classes the breakdown, the roofline and `diff` print (analyses/kernel_class.h;
      // "communication" is the verdict of that name).
      {"gemm", "term", "GPU time in matrix multiplications (cuBLAS/cuBLASLt, CUTLASS, Triton matmuls).",
       "From kernel names (gemm, gemv, nvjet, cutlass, cublas, matmul, wgmma ...) and the ops that launched them "
       "(aten::mm, aten::addmm, aten::linear ...).",
       "Below the roofline's ridge point a matmul is memory-bound (memory-bound-matmul); at FP32 without tensor "
       "cores see no-tensor-cores."},
      {"conv", "term", "GPU time in convolutions (cuDNN forward, data-gradient and weight-gradient kernels).",
       "From kernel names (conv, fprop, dgrad, wgrad, winograd) and aten::convolution ops.",
       "NCHW inputs add layout transposes around them (nchw-layout); channels_last and bf16 are the usual fixes."},
      {"attention", "term", "GPU time in attention kernels (flash, memory-efficient or cuDNN SDPA).",
       "From kernel names (flash, fmha, attention, sdpa, mha_fwd) and attention ops.",
       "Usually efficient already; a long tail of small attention kernels points to launch overhead."},
      {"elementwise", "term",
       "GPU time in pointwise kernels (activations, adds, casts, optimizer updates), each reading and writing "
       "its tensors once.",
       "From kernel names (elementwise, vectorized, unrolled, multi_tensor_apply, triton_poi ...) and pointwise aten "
       "ops; NCHW<->NHWC layout transforms count here too.",
       "Memory-bound by nature: fuse chains of them (torch-compile, fused optimizers; memory-bound-elementwise)."},
      {"reduction", "term", "GPU time in reductions (sum, mean, max, softmax's and the loss's reductions).",
       "From kernel names (reduce, softmax, cross_entropy, topk, triton_red ...) and reduction aten ops.",
       "Memory-bound like elementwise work; fused with their neighbours by torch.compile."},
      {"normalization", "term", "GPU time in normalization kernels (LayerNorm, BatchNorm, RMSNorm, GroupNorm).",
       "From kernel names (layer_norm, batch_norm, rms_norm, welford ...) and ops containing norm.",
       "Memory-bound; fused implementations (apex, torch.compile) cut their passes over memory."},
      {"copy", "term", "GPU time in memory copies and memsets (host<->device, device to device).",
       "From the trace's memcpy and memset records.",
       "See transfer-bound and pageable-memcpy for host<->device copies; device copies often come from "
       ".contiguous() or layout changes."},
      {"other", "term", "GPU time in kernels no other class claims (custom CUDA, sorting, indexing, RNG ...).",
       "Kernels whose names and launching ops match none of the other classes.",
       "Look at the top kernels table for what they are."},
  };
  return kEntries;
}

}  // namespace

const std::vector<GlossaryEntry>& glossary() {
  static const std::vector<GlossaryEntry> kAll = [] {
    std::vector<GlossaryEntry> all;
    for (const auto& r : all_rules()) all.push_back({r.id, "finding", r.meaning, r.detection, r.action});
    const auto& rest = other_entries();
    all.insert(all.end(), rest.begin(), rest.end());
    const auto& metrics = metric_glossary();
    all.insert(all.end(), metrics.begin(), metrics.end());
    return all;
  }();
  return kAll;
}

namespace {

// An id as the reports may print it, reduced to one spelling: any case, and '_' or ' ' for
// '-' ("launch_overhead" an idle cause, "Host-Work", the metric "sub wave kernel pct" of
// the text report).
std::string normalized(std::string_view id) {
  std::string norm;
  for (char c : id) {
    norm += c == '_' || c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return norm;
}

}  // namespace

const GlossaryEntry* find_glossary_entry(std::string_view id) {
  for (const auto& e : glossary()) {
    if (e.id == id) return &e;
  }
  const std::string norm = normalized(id);
  for (const auto& e : glossary()) {
    if (normalized(e.id) == norm) return &e;
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
  const bool remedy = e.kind == "remedy", metric = e.kind == "metric";
  std::string out = fmt::format("{} ({})\n", e.id, e.kind);
  out += std::string(metric ? "  What it measures:\n" : "  What it means:\n") + wrap(e.meaning, 4);
  out += std::string(remedy   ? "  When it is suggested, how it is estimated:\n"
                     : metric ? "  Where it comes from:\n"
                              : "  How it is detected:\n") +
         wrap(e.detection, 4);
  out += std::string(remedy   ? "  The change:\n"
                     : metric ? "  How to read it:\n"
                              : "  What to do:\n") +
         wrap(e.action, 4);
  return out;
}

std::string format_glossary_index() {
  std::string out;
  for (std::string_view kind : {"finding", "remedy", "verdict", "term", "metric"}) {
    std::string ids;
    for (const auto& e : glossary()) {
      if (e.kind != kind) continue;
      if (!ids.empty()) ids += ' ';
      ids += e.id;
    }
    const char* title = kind == "finding"   ? "Findings"
                        : kind == "remedy"  ? "Remedies"
                        : kind == "verdict" ? "Verdicts"
                        : kind == "term"    ? "Report terms"
                                            : "Metrics";
    out += fmt::format("{}:\n{}", title, wrap(ids, 2));
  }
  out += "Run 'chokepoint explain ID' for what an id means, how it is detected and what to do.\n";
  return out;
}

}  // namespace chokepoint::rules
