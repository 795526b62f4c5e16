"""DCGAN on Fashion-MNIST (28x28 padded to 32x32), non-saturating loss on logits.

Saves a fixed-noise sample grid every epoch so that runs can be compared visually.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class Generator(nn.Module):
    def __init__(self, z_dim=100, width=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z_dim, width * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(width * 4), nn.ReLU(True),
            nn.ConvTranspose2d(width * 4, width * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(width * 2), nn.ReLU(True),
            nn.ConvTranspose2d(width * 2, width, 4, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(True),
            nn.ConvTranspose2d(width, 1, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z[:, :, None, None])


class Discriminator(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, width, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(width, width * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(width * 2), nn.LeakyReLU(0.2, True),
            nn.Conv2d(width * 2, width * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(width * 4), nn.LeakyReLU(0.2, True),
            nn.Conv2d(width * 4, 1, 4, 1, 0),
        )

    def forward(self, x):
        return self.net(x).flatten()


def dcgan_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def save_grid(images, path, nrow=8):
    imgs = ((images.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).cpu().numpy()[:, 0]
    rows = [np.concatenate(list(imgs[r * nrow : (r + 1) * nrow]), axis=1) for r in range(len(imgs) // nrow)]
    Image.fromarray(np.concatenate(rows, axis=0)).save(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--out", default="samples/dcgan_fashion")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tf = transforms.Compose([transforms.Pad(2), transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    loader = DataLoader(datasets.FashionMNIST(args.data, train=True, download=True, transform=tf),
                        batch_size=128, shuffle=True, num_workers=4, drop_last=True)

    G, D = Generator().to(device), Discriminator().to(device)
    G.apply(dcgan_init)
    D.apply(dcgan_init)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_z = torch.randn(64, 100, device=device)

    for epoch in range(args.epochs):
        G.train()
        D.train()
        for real, _ in loader:
            real = real.to(device)
            z = torch.randn(real.size(0), 100, device=device)
            fake = G(z)

            d_real, d_fake = D(real), D(fake.detach())
            loss_d = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
                F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
            opt_d.zero_grad(set_to_none=True)
            loss_d.backward()
            opt_d.step()

            g_logits = D(fake)
            loss_g = F.binary_cross_entropy_with_logits(g_logits, torch.ones_like(g_logits))
            opt_g.zero_grad(set_to_none=True)
            loss_g.backward()
            opt_g.step()

        G.eval()
        with torch.no_grad():
            save_grid(G(fixed_z), os.path.join(args.out, f"epoch_{epoch:03d}.png"))
        G.train()
        print(f"epoch {epoch}: loss_d {loss_d.item():.3f} loss_g {loss_g.item():.3f}")

    torch.save({"G": G.state_dict(), "D": D.state_dict()}, os.path.join(args.out, "dcgan.pt"))


if __name__ == "__main__":
    main()
