"""Convolutional VAE on 64x64 game sprites, with mixed precision and preemption-safe resume."""
import os
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms, utils


@dataclass
class Config:
    data: str = "data/sprites"
    latent: int = 128
    batch_size: int = 128
    epochs: int = 100
    lr: float = 5e-4
    beta: float = 1.0
    clip: float = 5.0
    ckpt_dir: str = "runs/sprite_vae"
    resume: Optional[str] = "runs/sprite_vae/last.pt"


class SpriteVAE(nn.Module):
    def __init__(self, latent):
        super().__init__()
        ch = [3, 32, 64, 128, 256]
        enc = []
        for a, b in zip(ch[:-1], ch[1:]):
            enc += [nn.Conv2d(a, b, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(b), nn.LeakyReLU(0.2)]
        self.encoder = nn.Sequential(*enc, nn.Flatten())
        self.to_stats = nn.Linear(256 * 4 * 4, 2 * latent)
        self.from_z = nn.Linear(latent, 256 * 4 * 4)
        dec = []
        for a, b in zip(ch[:0:-1], ch[-2:0:-1]):
            dec += [nn.ConvTranspose2d(a, b, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
        self.decoder = nn.Sequential(*dec, nn.ConvTranspose2d(32, 3, 4, stride=2, padding=1))

    def forward(self, x):
        mu, logvar = self.to_stats(self.encoder(x)).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decoder(self.from_z(z).view(-1, 256, 4, 4)), mu, logvar


def vae_loss(recon_logits, x, mu, logvar, beta):
    recon = F.binary_cross_entropy_with_logits(recon_logits.float(), x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar.float() - mu.float().pow(2) - logvar.float().exp()) / x.size(0)
    return recon + beta * kl, recon.detach(), kl.detach()


def save_checkpoint(path, model, opt, sched, scaler, epoch, best):
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "scaler": scaler.state_dict(), "epoch": epoch, "best": best}, path)


def load_checkpoint(path, model, opt, sched, scaler):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    sched.load_state_dict(ckpt["scheduler"])
    scaler.load_state_dict(ckpt["scaler"])
    return ckpt["epoch"] + 1, ckpt["best"]


def main(cfg=Config()):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = device.type == "cuda"
    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor()])
    data = datasets.ImageFolder(cfg.data, transform=tf)
    loader = DataLoader(data, batch_size=cfg.batch_size, shuffle=True, num_workers=6, drop_last=True)

    model = SpriteVAE(cfg.latent).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    start, best = 0, float("inf")
    if cfg.resume and os.path.exists(cfg.resume):
        start, best = load_checkpoint(cfg.resume, model, opt, sched, scaler)
        print(f"resumed at epoch {start}, best loss so far {best:.2f}")
    os.makedirs(cfg.ckpt_dir, exist_ok=True)
    fixed_z = torch.randn(64, cfg.latent, device=device)

    for epoch in range(start, cfg.epochs):
        model.train()
        sums, seen = torch.zeros(3), 0
        for x, _ in loader:
            x = x.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                recon_logits, mu, logvar = model(x)
            loss, recon, kl = vae_loss(recon_logits, x, mu, logvar, cfg.beta)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            scaler.step(opt)
            scaler.update()
            sums += torch.stack([loss.detach(), recon, kl]).cpu() * x.size(0)
            seen += x.size(0)
        sched.step()
        epoch_loss, epoch_recon, epoch_kl = (sums / seen).tolist()
        print(f"epoch {epoch:3d}  loss {epoch_loss:.2f}  recon {epoch_recon:.2f}  kl {epoch_kl:.2f}")
        if epoch_loss < best:
            best = epoch_loss
            torch.save(model.state_dict(), os.path.join(cfg.ckpt_dir, "best_model.pt"))
        save_checkpoint(os.path.join(cfg.ckpt_dir, "last.pt"), model, opt, sched, scaler, epoch, best)
        model.eval()
        with torch.no_grad():
            samples = torch.sigmoid(model.decoder(model.from_z(fixed_z).view(-1, 256, 4, 4)))
        utils.save_image(samples, os.path.join(cfg.ckpt_dir, f"samples_{epoch:03d}.png"), nrow=8)


if __name__ == "__main__":
    main()
