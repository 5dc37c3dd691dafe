# A small PyTorch job for `chokepoint kernels --ncu` (gpu_kernels.sh): a bf16 GEMM 8192^3
# (compute-bound), an in-place axpy on 1 GiB FP32 tensors (memory-bound elementwise) and a
# cumulative sum over a short tensor (few blocks: latency-bound), a few rounds each.
import torch

a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
x = torch.randn(1 << 28, device="cuda")
y = torch.randn(1 << 28, device="cuda")
s = torch.randn(4096, device="cuda")
for _ in range(4):
    c = a @ b
    y.add_(x, alpha=2.0)
    t = torch.cumsum(s, 0)
torch.cuda.synchronize()
print("ok", float(c[0, 0]), float(t[-1]))
