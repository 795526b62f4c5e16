"""Conditional GAN that turns a level designer's ridge/river sketch into a terrain heightmap.

Generator: a small encoder-decoder. Discriminator: a patch classifier on (sketch, heightmap)
pairs. The generator is trained with the adversarial loss plus an L1 term.
"""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def down(c_in, c_out, norm=True):
    layers = [nn.Conv2d(c_in, c_out, 4, stride=2, padding=1, bias=not norm)]
    if norm:
        layers.append(nn.BatchNorm2d(c_out))
    layers.append(nn.LeakyReLU(0.2, inplace=True))
    return nn.Sequential(*layers)


def up(c_in, c_out):
    return nn.Sequential(nn.ConvTranspose2d(c_in, c_out, 4, stride=2, padding=1, bias=False),
                         nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class TerrainGenerator(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.d1, self.d2, self.d3 = down(2, c, norm=False), down(c, 2 * c), down(2 * c, 4 * c)
        self.u3, self.u2 = up(4 * c, 2 * c), up(4 * c, c)
        self.u1 = nn.ConvTranspose2d(2 * c, 1, 4, stride=2, padding=1)

    def forward(self, sketch):
        d1 = self.d1(sketch)
        d2 = self.d2(d1)
        d3 = self.d3(d2)
        u3 = self.u3(d3)
        u2 = self.u2(torch.cat([u3, d2], 1))
        return torch.tanh(self.u1(torch.cat([u2, d1], 1)))


class PatchCritic(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.net = nn.Sequential(down(3, c, norm=False), down(c, 2 * c), nn.Conv2d(2 * c, 1, 3, padding=1))

    def forward(self, sketch, height):
        return self.net(torch.cat([sketch, height], dim=1))


def load_pairs(path):
    d = np.load(path)
    sketch = torch.from_numpy(d["sketch"].astype(np.float32)).permute(0, 3, 1, 2)
    height = torch.from_numpy(d["height"].astype(np.float32))[:, None]
    height = 2 * (height - height.amin(dim=(2, 3), keepdim=True)) / (
        height.amax(dim=(2, 3), keepdim=True) - height.amin(dim=(2, 3), keepdim=True) + 1e-6) - 1
    return TensorDataset(sketch, height)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/terrain_pairs.npz")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--l1", type=float, default=100.0)
    ap.add_argument("--out", default="runs/terrain")
    args = ap.parse_args(argv)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(load_pairs(args.data), batch_size=args.batch_size, shuffle=True, drop_last=True)
    gen, critic = TerrainGenerator().to(device), PatchCritic().to(device)
    opt_g = torch.optim.Adam(gen.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(critic.parameters(), lr=args.lr, betas=(0.5, 0.999))
    adv = nn.BCEWithLogitsLoss()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    for epoch in range(args.epochs):
        gen.train()
        critic.train()
        for sketch, height in loader:
            sketch, height = sketch.to(device), height.to(device)
            fake = gen(sketch)

            real_logits = critic(sketch, height)
            fake_logits = critic(sketch, fake.detach())
            d_loss = 0.5 * (adv(real_logits, torch.ones_like(real_logits)) + adv(fake_logits, torch.zeros_like(fake_logits)))
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()

            gen_logits = critic(sketch, fake)
            g_loss = adv(gen_logits, torch.ones_like(gen_logits)) + args.l1 * F.l1_loss(fake, height)
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        print(f"epoch {epoch}: D {d_loss.item():.4f} G {g_loss.item():.4f}")

        gen.eval()
        with torch.no_grad():
            preview = gen(sketch[:4]).cpu()
        torch.save({"generator": gen.state_dict(), "critic": critic.state_dict(),
                    "opt_g": opt_g.state_dict(), "opt_d": opt_d.state_dict(), "epoch": epoch}, out / "last.pt")
        np.save(out / f"preview_{epoch:03d}.npy", preview.numpy())


if __name__ == "__main__":
    main()
