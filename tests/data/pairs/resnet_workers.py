#!/usr/bin/env python3
"""ImageNet-style ResNet-50 training (pytorch/examples imagenet/main.py), FakeData images
decoded and augmented on the CPU by DataLoader workers: RandomResizedCrop, flip,
ToTensor, Normalize, batch 256, FP32 (cuDNN runs the convolutions on TF32 tensor cores).

Input-bound: 4 workers (`-j 4`) cannot augment 256 images as fast as the GPU trains on
them; each worker sits at ~100% of a core. Fix (--fix): one worker per free core
(os.cpu_count() - 2: the main process and its pin-memory thread keep theirs),
persistent_workers and pin_memory with non_blocking copies.
"""
import os

import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T

import harness as H

args = H.parse(__doc__)
torch.backends.cudnn.benchmark = True
torch.manual_seed(0)
B = H.size(256, 8)
workers = max(2, (os.cpu_count() or 4) - 2) if args.fix else H.size(4, 2)
tf = T.Compose([T.RandomResizedCrop(H.size(224, 64)), T.RandomHorizontalFlip(), T.ToTensor(),
                T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
dataset = torchvision.datasets.FakeData(size=1_000_000, image_size=(3, 256, 256) if not H.SMALL else (3, 72, 72),
                                        num_classes=1000, transform=tf)
loader = torch.utils.data.DataLoader(dataset, batch_size=B, shuffle=True, num_workers=workers,
                                     pin_memory=args.fix and H.CUDA, persistent_workers=args.fix,
                                     prefetch_factor=4 if args.fix else 2, drop_last=True)
model = torchvision.models.resnet50().to(H.DEV)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
batches = iter(loader)


def step():
    images, target = next(batches)
    images = images.to(H.DEV, non_blocking=args.fix)
    target = target.to(H.DEV, non_blocking=args.fix)
    loss = criterion(model(images), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


print(f"resnet_workers: {workers} DataLoader workers", flush=True)
H.run(step, args, "resnet_workers", samples_per_step=B)
