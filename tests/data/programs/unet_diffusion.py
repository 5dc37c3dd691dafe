"""unet_diffusion.py -- DDPM training in the style of HuggingFace diffusers
examples/unconditional_image_generation/train_unconditional.py.

Imitates: train_unconditional.py (`--resolution 64 --train_batch_size 64
  --use_ema --mixed_precision bf16 --lr_warmup_steps 500`), without
  accelerate/diffusers: a hand-written DDPM UNet (ResBlocks with
  GroupNorm + SiLU, sinusoidal time embedding, 4 resolutions 64/32/16/8 with
  channels 64/128/256/512, 2 ResBlocks per level, strided-conv downsampling,
  nearest-neighbour upsampling, one self-attention block at 8x8 in the middle;
  ~57M parameters in 278 tensors), random 64x64 RGB uint8 images in a Dataset with the
  example's augmentations (random flip, to [-1, 1]) served by
  DataLoader(batch 64, shuffle, num_workers=4), a DDPM noise scheduler (linear
  betas 1e-4..0.02, 1000 steps, add_noise), MSE loss on the predicted noise,
  AdamW(lr 1e-4, betas (0.95, 0.999), wd 1e-6), warmup + cosine lr, bf16
  autocast, grad clipping 1.0, an EMA copy of the model updated every step,
  a sampling pass with the EMA model every save_images_steps steps (a few
  DDIM-style denoising steps, images written as .npy) followed by a
  checkpoint (model, EMA, optimizer state).

Planted hot spot: the EMA update runs every step as a Python loop over the
  parameters:
      for ema_p, p in zip(ema.parameters(), model.parameters()):
          ema_p.mul_(decay).add_(p.detach(), alpha=1 - decay)
  i.e. two tiny kernels per parameter tensor (278 tensors): ~500 launches per
  step of pure framework overhead, GPU mostly idle between them.

Fix (--fix): one multi-tensor update,
  torch._foreach_lerp_(ema_params, model_params, 1 - decay)
  (ema + (1-decay) * (p - ema) == decay * ema + (1-decay) * p).

Printed line (every 10 steps):
  step {s}: loss {l:.4f}, {ms:.1f} ms/it
  ms/it is the wall time since the previous log line divided by the number of
  steps in the interval (time.time() deltas; the interval ends with the
  loss.item() sync at the log line), loss is averaged over the interval.
  --result iter_ms gives every step of an interval that interval's ms/it.
  Sampling: sample step {s}: {n} images, mean {:.4f}, std {:.4f}
"""

import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROGRAM = "unet_diffusion"


# -----------------------------------------------------------------------------
# model

def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=timesteps.device) / half)
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, temb_ch, dropout=0.0, groups=32):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.temb_proj = nn.Linear(temb_ch, out_ch)
        self.norm2 = nn.GroupNorm(groups, out_ch)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    def __init__(self, ch, heads=8, groups=32):
        super().__init__()
        self.norm = nn.GroupNorm(groups, ch)
        self.qkv = nn.Conv2d(ch, 3 * ch, 1)
        self.proj = nn.Conv2d(ch, ch, 1)
        self.heads = heads

    def forward(self, x):
        B, C, H, W = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(B, 3, self.heads, C // self.heads, H * W).unbind(1)
        h = F.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2), v.transpose(-1, -2))
        h = h.transpose(-1, -2).reshape(B, C, H, W)
        return x + self.proj(h)


class Downsample(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


class Upsample(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class UNet(nn.Module):
    def __init__(self, in_ch=3, ch=64, ch_mult=(1, 2, 4, 8), num_res_blocks=2, dropout=0.0, groups=32):
        super().__init__()
        self.ch = ch
        temb_ch = ch * 4
        self.time_embed = nn.Sequential(nn.Linear(ch, temb_ch), nn.SiLU(), nn.Linear(temb_ch, temb_ch))
        self.conv_in = nn.Conv2d(in_ch, ch, 3, padding=1)
        self.down = nn.ModuleList()
        chans = [ch]
        cur = ch
        for level, mult in enumerate(ch_mult):
            for _ in range(num_res_blocks):
                self.down.append(ResBlock(cur, ch * mult, temb_ch, dropout, groups))
                cur = ch * mult
                chans.append(cur)
            if level != len(ch_mult) - 1:
                self.down.append(Downsample(cur))
                chans.append(cur)
        self.mid1 = ResBlock(cur, cur, temb_ch, dropout, groups)
        self.mid_attn = AttnBlock(cur, groups=groups)
        self.mid2 = ResBlock(cur, cur, temb_ch, dropout, groups)
        self.up = nn.ModuleList()
        for level, mult in reversed(list(enumerate(ch_mult))):
            for _ in range(num_res_blocks + 1):
                self.up.append(ResBlock(cur + chans.pop(), ch * mult, temb_ch, dropout, groups))
                cur = ch * mult
            if level != 0:
                self.up.append(Upsample(cur))
        self.norm_out = nn.GroupNorm(groups, cur)
        self.conv_out = nn.Conv2d(cur, in_ch, 3, padding=1)

    def forward(self, x, t):
        temb = self.time_embed(timestep_embedding(t, self.ch))
        h = self.conv_in(x)
        hs = [h]
        for m in self.down:
            h = m(h, temb) if isinstance(m, ResBlock) else m(h)
            hs.append(h)
        h = self.mid2(self.mid_attn(self.mid1(h, temb)), temb)
        for m in self.up:
            if isinstance(m, ResBlock):
                h = m(torch.cat([h, hs.pop()], dim=1), temb)
            else:
                h = m(h)
        return self.conv_out(F.silu(self.norm_out(h)))


# -----------------------------------------------------------------------------
# noise scheduler (DDPMScheduler: linear betas, add_noise) and a few-step sampler

class DDPMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=1e-4, beta_end=0.02):
        self.num_train_timesteps = num_train_timesteps
        self.betas = torch.linspace(beta_start, beta_end, num_train_timesteps, dtype=torch.float32)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)

    def add_noise(self, original_samples, noise, timesteps):
        acp = self.alphas_cumprod.to(device=original_samples.device, dtype=original_samples.dtype)
        sqrt_alpha_prod = acp[timesteps].sqrt().view(-1, 1, 1, 1)
        sqrt_one_minus_alpha_prod = (1 - acp[timesteps]).sqrt().view(-1, 1, 1, 1)
        return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise

    @torch.no_grad()
    def sample(self, model, shape, num_inference_steps, device, generator, autocast):
        """Deterministic DDIM-style sampling with a handful of steps."""
        acp = self.alphas_cumprod.to(device)
        x = torch.randn(shape, generator=generator, device="cpu").to(device)
        ts = torch.linspace(self.num_train_timesteps - 1, 0, num_inference_steps).long().tolist()
        for idx, t in enumerate(ts):
            t_prev = ts[idx + 1] if idx + 1 < len(ts) else -1
            a_t = acp[t]
            a_prev = acp[t_prev] if t_prev >= 0 else torch.tensor(1.0, device=device)
            with autocast:
                eps = model(x, torch.full((shape[0],), t, device=device, dtype=torch.long)).float()
            x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
            x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
        return x


class RandomImages(Dataset):
    """Stand-in for the image folder: random uint8 RGB images + the example's augmentations."""

    def __init__(self, n, resolution, seed):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.randint(0, 256, (n, 3, resolution, resolution), generator=g, dtype=torch.uint8)

    def __len__(self):
        return self.images.shape[0]

    def __getitem__(self, idx):
        img = self.images[idx]
        if torch.rand(()) < 0.5:           # RandomHorizontalFlip
            img = img.flip(-1)
        img = img.float().div(255.0)      # ToTensor
        img = (img - 0.5) / 0.5           # Normalize([0.5], [0.5])
        return {"input": img}


def main():
    parser = common.common_parser(__doc__, default_iters=250, small_iters=25)
    parser.add_argument("--resolution", type=int, default=16 if common.SMALL else 64)
    parser.add_argument("--train_batch_size", type=int, default=4 if common.SMALL else 64)
    parser.add_argument("--dataloader_num_workers", type=int, default=2 if common.SMALL else 4)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_warmup_steps", type=int, default=5 if common.SMALL else 100)
    parser.add_argument("--ema_max_decay", type=float, default=0.9999)
    parser.add_argument("--logging_steps", type=int, default=10)
    parser.add_argument("--save_images_steps", type=int, default=10 if common.SMALL else 100)
    parser.add_argument("--num_inference_steps", type=int, default=2 if common.SMALL else 10)
    args = parser.parse_args()

    common.seed_everything(args.seed)
    device = torch.device(common.DEVICE)
    output_dir = common.scratch_dir(PROGRAM)
    torch.backends.cudnn.benchmark = True

    if common.SMALL:
        model = UNet(ch=16, ch_mult=(1, 2), num_res_blocks=1, groups=8)
    else:
        model = UNet(ch=64, ch_mult=(1, 2, 4, 8), num_res_blocks=2, groups=32)
    model.to(device)
    ema_model = UNet(ch=16, ch_mult=(1, 2), num_res_blocks=1, groups=8) if common.SMALL else \
        UNet(ch=64, ch_mult=(1, 2, 4, 8), num_res_blocks=2, groups=32)
    ema_model.load_state_dict(model.state_dict())
    ema_model.to(device)
    ema_model.requires_grad_(False)
    ema_model.eval()
    n_params = sum(p.numel() for p in model.parameters())
    n_tensors = len(list(model.parameters()))
    print(f"UNet: {n_params / 1e6:.1f}M parameters in {n_tensors} tensors")

    raw_model = model
    if args.compile:
        model = torch.compile(model)

    noise_scheduler = DDPMScheduler(num_train_timesteps=1000, beta_start=1e-4, beta_end=0.02)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, betas=(0.95, 0.999),
                                  weight_decay=1e-6, eps=1e-8)

    dataset = RandomImages(args.train_batch_size * (20 if common.SMALL else 80), args.resolution, args.seed)
    train_dataloader = DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True,
                                  num_workers=args.dataloader_num_workers, pin_memory=True, drop_last=True,
                                  persistent_workers=args.dataloader_num_workers > 0)

    max_train_steps = args.iters

    def lr_lambda(step):
        if step < args.lr_warmup_steps:
            return (step + 1) / args.lr_warmup_steps
        progress = (step - args.lr_warmup_steps) / max(1, max_train_steps - args.lr_warmup_steps)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
    autocast = torch.autocast(device_type=device.type, dtype=torch.bfloat16)

    ema_params = list(ema_model.parameters())
    model_params = list(raw_model.parameters())

    def get_decay(optimization_step):
        # EMAModel.get_decay (diffusers): warmup of the decay
        step = max(0, optimization_step - 1)
        if step <= 0:
            return 0.0
        cur_decay_value = (1 + step) / (10 + step)
        return min(cur_decay_value, args.ema_max_decay)

    print("***** Running training *****")
    print(f"  Num examples = {len(dataset)}")
    print(f"  Instantaneous batch size per device = {args.train_batch_size}")
    print(f"  Total optimization steps = {max_train_steps}")

    iter_ms = common.IterTimes()
    eval_after = []
    global_step = 0
    loss_sum = torch.zeros((), device=device)
    steps_in_window = 0
    t_log = time.time()
    sample_gen = torch.Generator().manual_seed(args.seed)
    done = False
    epoch = 0
    while not done:
        model.train()
        for step, batch in enumerate(train_dataloader):
            clean_images = batch["input"].to(device, non_blocking=True)
            # Sample noise that we'll add to the images
            noise = torch.randn(clean_images.shape, device=clean_images.device)
            bsz = clean_images.shape[0]
            # Sample a random timestep for each image
            timesteps = torch.randint(0, noise_scheduler.num_train_timesteps, (bsz,), device=clean_images.device).long()
            # Add noise to the clean images according to the noise magnitude at each timestep
            noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)

            with autocast:
                model_output = model(noisy_images, timesteps)
            loss = F.mse_loss(model_output.float(), noise)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()

            # EMA update, every step
            decay = get_decay(global_step + 1)
            with torch.no_grad():
                if not args.fix:
                    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
                        ema_p.mul_(decay).add_(p.detach(), alpha=1 - decay)
                else:
                    torch._foreach_lerp_(ema_params, model_params, 1 - decay)

            global_step += 1
            steps_in_window += 1
            loss_sum += loss.detach()

            if global_step % args.logging_steps == 0 or global_step >= max_train_steps:
                avg_loss = loss_sum.item() / steps_in_window   # host sync
                now = time.time()
                ms = (now - t_log) * 1000.0 / steps_in_window
                iter_ms.extend([ms] * steps_in_window)
                print(f"step {global_step}: loss {avg_loss:.4f}, {ms:.1f} ms/it, "
                      f"lr {lr_scheduler.get_last_lr()[0]:.2e}, ema_decay {decay:.4f}", flush=True)
                loss_sum.zero_()
                steps_in_window = 0

                if global_step % args.save_images_steps == 0 and global_step < max_train_steps:
                    eval_after.append(global_step - 1)
                    images = noise_scheduler.sample(ema_model, (16, 3, args.resolution, args.resolution),
                                                    args.num_inference_steps, device, sample_gen, autocast)
                    images = (images / 2 + 0.5).clamp(0, 1).cpu().numpy()
                    np.save(os.path.join(output_dir, f"samples_{global_step:06d}.npy"), images)
                    print(f"sample step {global_step}: {images.shape[0]} images, "
                          f"mean {images.mean():.4f}, std {images.std():.4f}", flush=True)
                    torch.save({"model": raw_model.state_dict(), "ema": ema_model.state_dict(),
                                "optimizer": optimizer.state_dict(), "step": global_step},
                               os.path.join(output_dir, "checkpoint.pt"))
                    print(f"saved state to {output_dir}", flush=True)
                t_log = time.time()

            if global_step >= max_train_steps:
                done = True
                break
        epoch += 1

    common.write_result(args, PROGRAM, iter_ms, eval_after)


if __name__ == "__main__":
    main()
