"""resnet_fake.py -- ResNet-50 training in the style of pytorch/examples imagenet/main.py.

Imitates: pytorch/examples imagenet/main.py run with `--dummy`-like data:
  torchvision.models.resnet50(), torchvision.datasets.FakeData (PIL images,
  3x224x224, 1000 classes), batch 32 (-b; with 64 the unfixed run is ~265 ms/iter on an H200) with the ImageNet train transforms
  (RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize),
  DataLoader(shuffle=True, num_workers=args.workers, pin_memory=True),
  CrossEntropyLoss, SGD(lr 0.1, momentum 0.9, wd 1e-4), StepLR, fp32 (TF32
  convolutions, the PyTorch default), AverageMeter / ProgressMeter logging,
  accuracy(topk=(1, 5)), validate() at the end of every epoch and
  save_checkpoint() (checkpoint.pth.tar + model_best.pth.tar).
  One "epoch" here is `--epoch-iters` (default 50) training batches; the
  training stops after --iters batches in total.

Planted hot spot: --workers defaults to 0, so FakeData's PIL image generation
  and the PIL/tensor transforms run on the main thread, serialised with the
  GPU work (the GPU idles while every batch is decoded/augmented).

Fix (--fix): DataLoader(num_workers=8, persistent_workers=True) for the train
  and validation loaders (as with `-j 8`), so batches are prepared in parallel
  worker processes and prefetched.

Printed line (every print_freq = 10 batches), the example's ProgressMeter:
  Epoch: [{epoch}][{i+1:>N}/{N}]\tTime {batch_time.val:6.3f} ({batch_time.avg:6.3f})\t
  Data {data_time.val:6.3f} ({data_time.avg:6.3f})\tLoss {val:.4e} ({avg:.4e})\t
  Acc@1 {:6.2f} ({:6.2f})\tAcc@5 {:6.2f} ({:6.2f})
  batch_time is measured per batch exactly like the example
  (end = time.time() at the end of every batch). The loop syncs every batch
  through losses.update(loss.item(), ...), so it is a true wall time per
  batch; --result iter_ms is batch_time.val of every batch (seconds * 1000).
  Validation: ` * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f}`
"""

import os
import shutil
import sys
import time
from enum import Enum

import torch
import torch.nn as nn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms
from torch.optim.lr_scheduler import StepLR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROGRAM = "resnet_fake"


def main():
    parser = common.common_parser(__doc__, default_iters=100, small_iters=12)
    parser.add_argument('-a', '--arch', default='resnet18' if common.SMALL else 'resnet50')
    parser.add_argument('-j', '--workers', default=None, type=int,
                        help='number of data loading workers (default: 0, 8 with --fix)')
    parser.add_argument('-b', '--batch-size', default=4 if common.SMALL else 32, type=int)
    parser.add_argument('--lr', '--learning-rate', default=0.1, type=float, dest='lr')
    parser.add_argument('--momentum', default=0.9, type=float)
    parser.add_argument('--wd', '--weight-decay', default=1e-4, type=float, dest='weight_decay')
    parser.add_argument('-p', '--print-freq', default=10, type=int)
    parser.add_argument('--epoch-iters', default=5 if common.SMALL else 50, type=int,
                        help='training batches per epoch (FakeData size / batch size)')
    parser.add_argument('--val-iters', default=2 if common.SMALL else 8, type=int)
    args = parser.parse_args()
    if args.workers is None:
        args.workers = (2 if common.SMALL else 8) if args.fix else 0

    common.seed_everything(args.seed)
    device = torch.device(common.DEVICE)
    image_size = 64 if common.SMALL else 224

    # create model
    print("=> creating model '{}'".format(args.arch))
    model = models.__dict__[args.arch]()
    model = model.to(device)
    if args.compile:
        model = torch.compile(model)

    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr,
                                momentum=args.momentum,
                                weight_decay=args.weight_decay)
    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)

    # Data loading code
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406],
                                     std=[0.229, 0.224, 0.225])
    train_dataset = datasets.FakeData(
        args.epoch_iters * args.batch_size, (3, image_size, image_size), 1000,
        transforms.Compose([
            transforms.RandomResizedCrop(image_size),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            normalize,
        ]), random_offset=0)
    val_dataset = datasets.FakeData(
        args.val_iters * args.batch_size, (3, image_size, image_size), 1000,
        transforms.Compose([
            transforms.ToTensor(),
            normalize,
        ]), random_offset=10_000_000)

    persistent = args.fix and args.workers > 0
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=True,
        num_workers=args.workers, pin_memory=True, persistent_workers=persistent)
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=args.batch_size, shuffle=False,
        num_workers=args.workers, pin_memory=True, persistent_workers=persistent)

    out_dir = common.scratch_dir(PROGRAM)
    best_acc1 = 0
    timings = {"iter_ms": common.IterTimes(), "eval_after": []}
    epochs = (args.iters + args.epoch_iters - 1) // args.epoch_iters
    for epoch in range(epochs):
        # train for one epoch
        train(train_loader, model, criterion, optimizer, epoch, device, args, timings)
        if len(timings["iter_ms"]) >= args.iters and epoch < epochs - 1:
            break

        # evaluate on validation set
        timings["eval_after"].append(len(timings["iter_ms"]) - 1)
        acc1 = validate(val_loader, model, criterion, args)
        scheduler.step()

        # remember best acc@1 and save checkpoint
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        save_checkpoint({
            'epoch': epoch + 1,
            'arch': args.arch,
            'state_dict': model.state_dict(),
            'best_acc1': best_acc1,
            'optimizer': optimizer.state_dict(),
            'scheduler': scheduler.state_dict()
        }, is_best, os.path.join(out_dir, 'checkpoint.pth.tar'))

    # the pass after the last iteration is not "followed" by training
    eval_after = [i for i in timings["eval_after"] if i < len(timings["iter_ms"]) - 1]
    common.write_result(args, PROGRAM, timings["iter_ms"], eval_after)


def train(train_loader, model, criterion, optimizer, epoch, device, args, timings):
    batch_time = AverageMeter('Time', ':6.3f')
    data_time = AverageMeter('Data', ':6.3f')
    losses = AverageMeter('Loss', ':.4e')
    top1 = AverageMeter('Acc@1', ':6.2f')
    top5 = AverageMeter('Acc@5', ':6.2f')
    progress = ProgressMeter(
        len(train_loader),
        [batch_time, data_time, losses, top1, top5],
        prefix="Epoch: [{}]".format(epoch))

    # switch to train mode
    model.train()

    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        if len(timings["iter_ms"]) >= args.iters:
            break
        # measure data loading time
        data_time.update(time.time() - end)

        # move data to the same device as model
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        # compute output
        output = model(images)
        loss = criterion(output, target)

        # measure accuracy and record loss
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), images.size(0))
        top1.update(acc1[0], images.size(0))
        top5.update(acc5[0], images.size(0))

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()
        timings["iter_ms"].append(batch_time.val * 1000.0)

        if i % args.print_freq == 0:
            progress.display(i + 1)


def validate(val_loader, model, criterion, args):
    batch_time = AverageMeter('Time', ':6.3f', Summary.NONE)
    losses = AverageMeter('Loss', ':.4e', Summary.NONE)
    top1 = AverageMeter('Acc@1', ':6.2f', Summary.AVERAGE)
    top5 = AverageMeter('Acc@5', ':6.2f', Summary.AVERAGE)
    progress = ProgressMeter(
        len(val_loader),
        [batch_time, losses, top1, top5],
        prefix='Test: ')

    # switch to evaluate mode
    model.eval()

    with torch.no_grad():
        end = time.time()
        for i, (images, target) in enumerate(val_loader):
            images = images.to(common.DEVICE, non_blocking=True)
            target = target.to(common.DEVICE, non_blocking=True)

            # compute output
            output = model(images)
            loss = criterion(output, target)

            # measure accuracy and record loss
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), images.size(0))
            top1.update(acc1[0], images.size(0))
            top5.update(acc5[0], images.size(0))

            # measure elapsed time
            batch_time.update(time.time() - end)
            end = time.time()

            if i % args.print_freq == 0:
                progress.display(i + 1)

    progress.display_summary()
    return float(top1.avg)


def save_checkpoint(state, is_best, filename='checkpoint.pth.tar'):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, os.path.join(os.path.dirname(filename), 'model_best.pth.tar'))


class Summary(Enum):
    NONE = 0
    AVERAGE = 1
    SUM = 2
    COUNT = 3


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, name, fmt=':f', summary_type=Summary.AVERAGE):
        self.name = name
        self.fmt = fmt
        self.summary_type = summary_type
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'
        return fmtstr.format(**self.__dict__)

    def summary(self):
        fmtstr = ''
        if self.summary_type is Summary.NONE:
            fmtstr = ''
        elif self.summary_type is Summary.AVERAGE:
            fmtstr = '{name} {avg:.3f}'
        elif self.summary_type is Summary.SUM:
            fmtstr = '{name} {sum:.3f}'
        elif self.summary_type is Summary.COUNT:
            fmtstr = '{name} {count:.3f}'
        else:
            raise ValueError('invalid summary type %r' % self.summary_type)
        return fmtstr.format(**self.__dict__)


class ProgressMeter(object):
    def __init__(self, num_batches, meters, prefix=""):
        self.batch_fmtstr = self._get_batch_fmtstr(num_batches)
        self.meters = meters
        self.prefix = prefix

    def display(self, batch):
        entries = [self.prefix + self.batch_fmtstr.format(batch)]
        entries += [str(meter) for meter in self.meters]
        print('\t'.join(entries), flush=True)

    def display_summary(self):
        entries = [" *"]
        entries += [meter.summary() for meter in self.meters]
        print(' '.join(entries), flush=True)

    def _get_batch_fmtstr(self, num_batches):
        num_digits = len(str(num_batches // 1))
        fmt = '{:' + str(num_digits) + 'd}'
        return '[' + fmt + '/' + fmt.format(num_batches) + ']'


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


if __name__ == '__main__':
    main()
