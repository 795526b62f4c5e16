"""DDPM on 32x32 digits (MNIST padded) with a small U-Net, EMA weights and mixed precision.

The job runs on a preemptible queue: it checkpoints every `ckpt_every` steps and resumes from
`last.pt` when restarted.
"""
import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


@dataclass
class TrainConfig:
    data_root: str = "data"
    out_dir: str = "runs/ddpm_digits"
    timesteps: int = 1000
    base: int = 64
    batch_size: int = 128
    total_steps: int = 60_000
    warmup: int = 1_000
    lr: float = 2e-4
    ema_decay: float = 0.999
    ckpt_every: int = 2_000
    amp: bool = torch.cuda.is_available()


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10_000) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([args.sin(), args.cos()], dim=1)


class ResBlock(nn.Module):
    def __init__(self, c_in, c_out, t_dim):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, c_in), nn.Conv2d(c_in, c_out, 3, padding=1)
        self.t = nn.Linear(t_dim, c_out)
        self.n2, self.c2 = nn.GroupNorm(8, c_out), nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x))) + self.t(temb)[:, :, None, None]
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class TinyUNet(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.t_dim = base * 4
        self.t_mlp = nn.Sequential(nn.Linear(base, self.t_dim), nn.SiLU(), nn.Linear(self.t_dim, self.t_dim))
        self.inp = nn.Conv2d(1, base, 3, padding=1)
        self.d1, self.d2 = ResBlock(base, base, self.t_dim), ResBlock(base, base * 2, self.t_dim)
        self.mid = ResBlock(base * 2, base * 2, self.t_dim)
        self.u2, self.u1 = ResBlock(base * 4, base, self.t_dim), ResBlock(base * 2, base, self.t_dim)
        self.out = nn.Sequential(nn.GroupNorm(8, base), nn.SiLU(), nn.Conv2d(base, 1, 3, padding=1))

    def forward(self, x, t):
        temb = self.t_mlp(timestep_embedding(t, self.t_dim // 4))
        h1 = self.d1(self.inp(x), temb)                       # 32x32
        h2 = self.d2(F.avg_pool2d(h1, 2), temb)               # 16x16
        m = self.mid(F.avg_pool2d(h2, 2), temb)               # 8x8
        u = self.u2(torch.cat([F.interpolate(m, scale_factor=2.0), h2], 1), temb)
        u = self.u1(torch.cat([F.interpolate(u, scale_factor=2.0, mode="nearest"), h1], 1), temb)
        return self.out(u)


def make_schedule(cfg, device):
    betas = torch.linspace(1e-4, 0.02, cfg.timesteps, device=device)
    return torch.cumprod(1.0 - betas, dim=0)


def lr_lambda(cfg):
    def f(step):
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        progress = (step - cfg.warmup) / max(1, cfg.total_steps - cfg.warmup)
        return 0.5 * (1 + math.cos(math.pi * progress))
    return f


def save_checkpoint(path, step, model, ema, opt, scaler):
    torch.save({"step": step, "model": model.state_dict(), "ema": ema.state_dict(),
                "opt": opt.state_dict(), "scaler": scaler.state_dict()}, path)


def load_checkpoint(path, model, ema, opt, scaler):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    ema.load_state_dict(ckpt["ema"])
    opt.load_state_dict(ckpt["opt"])
    scaler.load_state_dict(ckpt["scaler"])
    return ckpt["step"]


def train(cfg: TrainConfig):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    os.makedirs(cfg.out_dir, exist_ok=True)
    tf = transforms.Compose([transforms.Pad(2), transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    loader = DataLoader(datasets.MNIST(cfg.data_root, train=True, download=True, transform=tf),
                        batch_size=cfg.batch_size, shuffle=True, num_workers=4, drop_last=True)
    model, ema = TinyUNet(cfg.base).to(device), TinyUNet(cfg.base).to(device)
    ema.load_state_dict(model.state_dict())
    ema.requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda(cfg))
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp)
    alpha_bar = make_schedule(cfg, device)

    step, last = 0, os.path.join(cfg.out_dir, "last.pt")
    if os.path.exists(last):
        step = load_checkpoint(last, model, ema, opt, scaler)
        print(f"resumed at step {step}")

    model.train()
    while step < cfg.total_steps:
        for x0, _ in loader:
            x0 = x0.to(device, non_blocking=True)
            t = torch.randint(0, cfg.timesteps, (x0.size(0),), device=device)
            noise = torch.randn_like(x0)
            ab = alpha_bar[t].view(-1, 1, 1, 1)
            xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=cfg.amp):
                loss = F.mse_loss(model(xt, t), noise)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            sched.step()
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters()):
                    pe.lerp_(pm, 1 - cfg.ema_decay)
            step += 1
            if step % 500 == 0:
                print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e}")
            if step % cfg.ckpt_every == 0 or step == cfg.total_steps:
                save_checkpoint(last, step, model, ema, opt, scaler)
            if step == cfg.total_steps:
                break


if __name__ == "__main__":
    train(TrainConfig())
