#!/usr/bin/env python3
"""Training ResNet-50 with bf16 autocast on data already on the GPU (a DALI-fed or
cached-dataset job), in PyTorch's default NCHW memory format.

cuDNN's fast bf16 convolution kernels work on NHWC: with NCHW tensors every convolution
is wrapped in layout transposes (nchwToNhwc / nhwcToNchw kernels) and batch norm runs its
NCHW kernels. Fix (--fix): model.to(memory_format=torch.channels_last) and channels_last
inputs, as the PyTorch performance tuning guide recommends for AMP convnets.
"""
import torch
import torch.nn as nn
import torchvision

import harness as H

args = H.parse(__doc__)
torch.backends.cudnn.benchmark = True
torch.manual_seed(0)
B, RES = H.size(128, 4), H.size(224, 64)
fmt = torch.channels_last if args.fix else torch.contiguous_format
model = torchvision.models.resnet50().to(H.DEV, memory_format=fmt)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
images = torch.randn(8, B, 3, RES, RES, device=H.DEV)
labels = torch.randint(1000, (8, B), device=H.DEV)
it = 0


def step():
    global it
    x = images[it % 8].contiguous(memory_format=fmt)
    y = labels[it % 8]
    it += 1
    with H.autocast():
        loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


H.run(step, args, "cnn_channels_last", samples_per_step=B)
