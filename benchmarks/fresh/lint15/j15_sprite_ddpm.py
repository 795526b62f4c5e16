import copy
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

HPARAMS = dict(data="data/sprites_32x32.npy", out="runs/sprite_ddpm", steps=1000, channels=64,
               batch=128, iters=60000, lr=2e-4, ema=0.999, sample_every=5000, n_samples=64)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


class ResBlock(nn.Module):
    def __init__(self, c_in, c_out, t_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(8, c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.time = nn.Linear(t_dim, c_out)
        self.norm2 = nn.GroupNorm(8, c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x))) + self.time(temb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class TinyUNet(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.t_dim = ch * 4
        self.t_mlp = nn.Sequential(nn.Linear(ch, self.t_dim), nn.SiLU(), nn.Linear(self.t_dim, self.t_dim))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.down1, self.down2 = ResBlock(ch, ch, self.t_dim), ResBlock(ch, 2 * ch, self.t_dim)
        self.mid = ResBlock(2 * ch, 2 * ch, self.t_dim)
        self.up2, self.up1 = ResBlock(4 * ch, ch, self.t_dim), ResBlock(2 * ch, ch, self.t_dim)
        self.out = nn.Sequential(nn.GroupNorm(8, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))
        self.ch = ch

    def forward(self, x, t):
        temb = self.t_mlp(timestep_embedding(t, self.ch))
        h1 = self.down1(self.inp(x), temb)
        h2 = self.down2(F.avg_pool2d(h1, 2), temb)
        m = self.mid(F.avg_pool2d(h2, 2), temb)
        u2 = self.up2(torch.cat([F.interpolate(m, scale_factor=2.0), h2], 1), temb)
        u1 = self.up1(torch.cat([F.interpolate(u2, scale_factor=2.0), h1], 1), temb)
        return self.out(u1)


class EMA(nn.Module):
    def __init__(self, model, decay):
        super().__init__()
        self.shadow = copy.deepcopy(model).eval().requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.lerp_(p, 1.0 - self.decay)

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        return self.shadow.state_dict(destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        return self.shadow.load_state_dict(state_dict, strict=strict, assign=assign)


def schedule(steps):
    betas = torch.linspace(1e-4, 0.02, steps)
    alphas = 1.0 - betas
    return betas, alphas, torch.cumprod(alphas, 0)


@torch.no_grad()
def sample(model, n, steps, device):
    betas, alphas, abar = (s.to(device) for s in schedule(steps))
    x = torch.randn(n, 3, 32, 32, device=device)
    for t in reversed(range(steps)):
        eps = model(x, torch.full((n,), t, device=device))
        x = (x - betas[t] / (1 - abar[t]).sqrt() * eps) / alphas[t].sqrt()
        if t > 0:
            x = x + betas[t].sqrt() * torch.randn_like(x)
    return x


def quantize(images):
    return ((images + 1.0) * 127.5).to(torch.uint8)


def save_grid(images, path, nrow=8):
    pixels = quantize(images.cpu()).permute(0, 2, 3, 1).numpy()
    rows = [np.concatenate(list(pixels[i:i + nrow]), axis=1) for i in range(0, len(pixels), nrow)]
    Image.fromarray(np.concatenate(rows, axis=0)).save(path)


def main(hp=HPARAMS):
    os.makedirs(hp["out"], exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = torch.from_numpy(np.load(hp["data"])).permute(0, 3, 1, 2).float() / 127.5 - 1.0
    model = TinyUNet(hp["channels"]).to(device)
    ema = EMA(model, hp["ema"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=hp["lr"], weight_decay=0.0)
    _, _, abar = schedule(hp["steps"])
    abar = abar.to(device)
    for it in range(1, hp["iters"] + 1):
        x0 = data[torch.randint(0, len(data), (hp["batch"],))].to(device)
        t = torch.randint(0, hp["steps"], (hp["batch"],), device=device)
        noise = torch.randn_like(x0)
        a = abar[t][:, None, None, None]
        loss = F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t), noise)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        ema.update(model)
        if it % hp["sample_every"] == 0:
            print(f"iter {it}: loss {loss.item():.4f}")
            save_grid(sample(ema.shadow, hp["n_samples"], hp["steps"], device), f"{hp['out']}/samples_{it:06d}.png")
            torch.save({"model": model.state_dict(), "ema": ema.state_dict(), "optimizer": optimizer.state_dict(),
                        "iter": it}, f"{hp['out']}/ckpt.pt")


if __name__ == "__main__":
    main()
