"""Convolutional beta-VAE on 64x64 aligned face crops (CelebA), trained in half precision
to fit batch 512 on a 16 GB card. Keeps the weights with the best validation ELBO.
"""
import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


@dataclass
class VAEConfig:
    image_dir: str = "/data/celeba/img_align_64"
    split_file: str = "/data/celeba/list_eval_partition.txt"
    latent: int = 128
    beta: float = 0.5
    batch_size: int = 512
    lr: float = 5e-4
    epochs: int = 40
    half_precision: bool = True


class Faces(Dataset):
    def __init__(self, cfg, partition):
        with open(cfg.split_file) as f:
            rows = [line.split() for line in f]
        self.files = [os.path.join(cfg.image_dir, name) for name, p in rows if int(p) == partition]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = np.asarray(Image.open(self.files[i]).convert("RGB"), dtype=np.float32) / 255.0
        return torch.from_numpy(img).permute(2, 0, 1).contiguous()


class ConvVAE(nn.Module):
    def __init__(self, latent):
        super().__init__()
        chans = [3, 32, 64, 128, 256]
        enc = []
        for a, b in zip(chans[:-1], chans[1:]):
            enc += [nn.Conv2d(a, b, 4, 2, 1), nn.LeakyReLU(0.2)]
        self.encoder = nn.Sequential(*enc, nn.Flatten())
        self.mu = nn.Linear(256 * 4 * 4, latent)
        self.logvar = nn.Linear(256 * 4 * 4, latent)
        self.expand = nn.Linear(latent, 256 * 4 * 4)
        dec = []
        for a, b in zip(chans[:0:-1], chans[-2::-1]):
            dec += [nn.ConvTranspose2d(a, b, 4, 2, 1), nn.LeakyReLU(0.2)]
        dec[-1] = nn.Identity()
        self.decoder = nn.Sequential(*dec)

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h).clamp(-10, 10)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decoder(self.expand(z).view(-1, 256, 4, 4)), mu, logvar


def elbo_terms(recon_logits, x, mu, logvar):
    rec = F.binary_cross_entropy_with_logits(recon_logits, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return rec, kl


def run(cfg: VAEConfig):
    device = torch.device("cuda")
    dtype = torch.float16 if cfg.half_precision else torch.float32
    model = ConvVAE(cfg.latent).to(device)
    if cfg.half_precision:
        model = model.half()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, eps=1e-4)

    train_dl = DataLoader(Faces(cfg, 0), batch_size=cfg.batch_size, shuffle=True, num_workers=8, drop_last=True)
    val_dl = DataLoader(Faces(cfg, 1), batch_size=cfg.batch_size, num_workers=8)

    best_val, best_weights = float("inf"), None
    for epoch in range(cfg.epochs):
        model.train()
        for x in train_dl:
            x = x.to(device, dtype=dtype)
            recon, mu, logvar = model(x)
            rec, kl = elbo_terms(recon, x, mu, logvar)
            loss = rec + cfg.beta * kl
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        total, n = 0.0, 0
        with torch.no_grad():
            for x in val_dl:
                x = x.to(device, dtype=dtype)
                recon, mu, logvar = model(x)
                rec, kl = elbo_terms(recon.float(), x.float(), mu.float(), logvar.float())
                total += (rec + kl).item() * x.size(0)
                n += x.size(0)
        val = total / n
        print(f"epoch {epoch:02d} val -ELBO {val:.2f}")
        if val < best_val:
            best_val = val
            best_weights = model.state_dict()

    model.load_state_dict(best_weights)
    torch.save(model.state_dict(), "face_vae_best.pt")
    print(f"saved weights with val -ELBO {best_val:.2f}")


if __name__ == "__main__":
    run(VAEConfig())
