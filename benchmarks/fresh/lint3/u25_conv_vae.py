"""Convolutional VAE on 64x64 CelebA crops; saves reconstructions and prior samples every epoch."""

import argparse
import logging
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

log = logging.getLogger("vae")


class ConvVAE(nn.Module):
    def __init__(self, z_dim=128, ch=32):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(3, ch, 4, 2, 1), nn.BatchNorm2d(ch), nn.LeakyReLU(0.2),
            nn.Conv2d(ch, 2 * ch, 4, 2, 1), nn.BatchNorm2d(2 * ch), nn.LeakyReLU(0.2),
            nn.Conv2d(2 * ch, 4 * ch, 4, 2, 1), nn.BatchNorm2d(4 * ch), nn.LeakyReLU(0.2),
            nn.Conv2d(4 * ch, 8 * ch, 4, 2, 1), nn.BatchNorm2d(8 * ch), nn.LeakyReLU(0.2),
        )
        self.flat = 8 * ch * 4 * 4
        self.mu = nn.Linear(self.flat, z_dim)
        self.logvar = nn.Linear(self.flat, z_dim)
        self.fc = nn.Linear(z_dim, self.flat)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(8 * ch, 4 * ch, 4, 2, 1), nn.BatchNorm2d(4 * ch), nn.ReLU(),
            nn.ConvTranspose2d(4 * ch, 2 * ch, 4, 2, 1), nn.BatchNorm2d(2 * ch), nn.ReLU(),
            nn.ConvTranspose2d(2 * ch, ch, 4, 2, 1), nn.BatchNorm2d(ch), nn.ReLU(),
            nn.ConvTranspose2d(ch, 3, 4, 2, 1),  # logits of the Bernoulli decoder
        )
        self.ch = ch

    def encode(self, x):
        h = self.enc(x).flatten(1)
        return self.mu(h), self.logvar(h)

    def decode(self, z):
        return self.dec(self.fc(z).view(-1, 8 * self.ch, 4, 4))

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decode(z), mu, logvar


def elbo_loss(logits, x, mu, logvar, beta=1.0):
    rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
    return rec + beta * kl, rec, kl


def save_images(batch, path, nrow=8):
    imgs = (batch.clamp(0, 1) * 255).round().to(torch.uint8).permute(0, 2, 3, 1).cpu().numpy()
    rows = [np.concatenate(list(imgs[i : i + nrow]), axis=1) for i in range(0, len(imgs), nrow)]
    Image.fromarray(np.concatenate(rows, axis=0)).save(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--beta", type=float, default=1.0)
    ap.add_argument("--out", default="vae_out")
    ap.add_argument("--resume", default="")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    tf = transforms.Compose([transforms.CenterCrop(148), transforms.Resize(64), transforms.ToTensor()])
    train = datasets.CelebA(args.root, split="train", transform=tf, download=False)
    loader = DataLoader(train, args.bs, shuffle=True, num_workers=8, drop_last=True, pin_memory=True)
    model = ConvVAE().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    if args.resume:
        state = torch.load(args.resume, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
    fixed_z = torch.randn(64, 128, device=device)

    for epoch in range(args.epochs):
        model.train()
        totals = np.zeros(3)
        for x, _ in loader:
            x = x.to(device, non_blocking=True)
            logits, mu, logvar = model(x)
            loss, rec, kl = elbo_loss(logits, x, mu, logvar, args.beta)
            opt.zero_grad()
            loss.backward()
            opt.step()
            totals += [loss.item(), rec.item(), kl.item()]
        totals /= len(loader)
        log.info("epoch %d  loss %.1f  rec %.1f  kl %.1f", epoch, *totals)
        model.eval()
        with torch.no_grad():
            save_images(torch.sigmoid(model.decode(fixed_z)), os.path.join(args.out, f"prior_{epoch:03d}.png"))
            recon = torch.sigmoid(model(x[:32])[0])
            save_images(torch.cat([x[:32], recon]), os.path.join(args.out, f"recon_{epoch:03d}.png"))
        torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, os.path.join(args.out, "vae.pt"))


if __name__ == "__main__":
    main()
