"""Draw samples from a trained DDPM (CelebA-HQ 64x64) with ancestral sampling or DDIM, and save grids."""

import argparse
import logging
import math
import os

import numpy as np
import torch
from PIL import Image

from diffusion.unet import UNet  # the training repo's model

log = logging.getLogger("sample")


def linear_betas(T, start=1e-4, end=2e-2):
    return torch.linspace(start, end, T, dtype=torch.float64)


class Schedule:
    def __init__(self, T, device):
        betas = linear_betas(T)
        alphas = 1.0 - betas
        alpha_bar = torch.cumprod(alphas, 0)
        alpha_bar_prev = torch.cat([torch.ones(1, dtype=torch.float64), alpha_bar[:-1]])
        self.T = T
        self.betas = betas.float().to(device)
        self.alphas = alphas.float().to(device)
        self.alpha_bar = alpha_bar.float().to(device)
        self.sigma = (betas * (1 - alpha_bar_prev) / (1 - alpha_bar)).sqrt().float().to(device)


@torch.no_grad()
def ancestral(model, sched, shape, device, generator):
    x = torch.randn(shape, device=device, generator=generator)
    for t in reversed(range(sched.T)):
        tt = torch.full((shape[0],), t, device=device, dtype=torch.long)
        eps = model(x, tt)
        coef = sched.betas[t] / (1 - sched.alpha_bar[t]).sqrt()
        mean = (x - coef * eps) / sched.alphas[t].sqrt()
        noise = torch.randn(shape, device=device, generator=generator) if t > 0 else 0.0
        x = mean + sched.sigma[t] * noise
    return x


@torch.no_grad()
def ddim(model, sched, shape, device, generator, steps=50):
    x = torch.randn(shape, device=device, generator=generator)
    ts = np.linspace(sched.T - 1, 0, steps).round().astype(int)
    for i, t in enumerate(ts):
        tt = torch.full((shape[0],), int(t), device=device, dtype=torch.long)
        eps = model(x, tt)
        ab = sched.alpha_bar[t]
        ab_prev = sched.alpha_bar[ts[i + 1]] if i + 1 < len(ts) else torch.tensor(1.0, device=device)
        x0 = (x - (1 - ab).sqrt() * eps) / ab.sqrt()
        x = ab_prev.sqrt() * x0 + (1 - ab_prev).sqrt() * eps
    return x


def to_grid(samples, nrow):
    b, c, h, w = samples.shape
    ncol = math.ceil(b / nrow)
    pixels = ((samples * 0.5 + 0.5) * 255).type(torch.uint8).cpu()
    canvas = torch.zeros(c, ncol * h, nrow * w, dtype=torch.uint8)
    for k in range(b):
        r, q = divmod(k, nrow)
        canvas[:, r * h : (r + 1) * h, q * w : (q + 1) * w] = pixels[k]
    return Image.fromarray(canvas.permute(1, 2, 0).numpy())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ckpt")
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--sampler", choices=["ancestral", "ddim"], default="ddim")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--outdir", default="samples")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    os.makedirs(args.outdir, exist_ok=True)

    ckpt = torch.load(args.ckpt, map_location="cpu", weights_only=True)
    model = UNet(**ckpt["config"])
    model.load_state_dict(ckpt["ema"])
    model = model.to(device).eval()
    sched = Schedule(ckpt["config"].get("timesteps", 1000), device)
    gen = torch.Generator(device=device).manual_seed(args.seed)

    for start in range(0, args.n, args.bs):
        shape = (min(args.bs, args.n - start), 3, 64, 64)
        if args.sampler == "ddim":
            x = ddim(model, sched, shape, device, gen, steps=args.steps)
        else:
            x = ancestral(model, sched, shape, device, gen)
        log.info("batch %d: range [%.2f, %.2f]", start // args.bs, x.min().item(), x.max().item())
        to_grid(x, nrow=8).save(os.path.join(args.outdir, f"grid_{start // args.bs:03d}.png"))


if __name__ == "__main__":
    main()
