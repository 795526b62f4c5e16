"""pix2pix (aerial photo -> map) on the `maps` pairs: U-Net generator, 70x70 PatchGAN, L1 + GAN.

Each file in data/maps/{train,val} is a 1200x600 JPEG: photo on the left, map on the right.
"""
import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


def make_norm(kind, ch):
    return {"batch": nn.BatchNorm2d, "instance": nn.InstanceNorm2d}[kind](ch)


class Down(nn.Sequential):
    def __init__(self, cin, cout, norm, use_norm=True):
        layers = [nn.Conv2d(cin, cout, 4, 2, 1, bias=not use_norm)]
        layers += [make_norm(norm, cout)] if use_norm else []
        super().__init__(*layers, nn.LeakyReLU(0.2, True))


class Up(nn.Sequential):
    def __init__(self, cin, cout, norm, dropout=False):
        layers = [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), make_norm(norm, cout)]
        super().__init__(*layers, *([nn.Dropout(0.5)] if dropout else []), nn.ReLU(True))


class UNetGenerator(nn.Module):
    def __init__(self, norm, ngf=64):
        super().__init__()
        widths = [ngf, ngf * 2, ngf * 4, ngf * 8, ngf * 8, ngf * 8, ngf * 8, ngf * 8]
        self.downs = nn.ModuleList([Down(3, widths[0], norm, use_norm=False)] +
                                   [Down(widths[i - 1], widths[i], norm, use_norm=i < 7) for i in range(1, 8)])
        self.ups = nn.ModuleList([Up(widths[7], widths[6], norm, dropout=True)] +
                                 [Up(widths[i] * 2, widths[i - 1], norm, dropout=i >= 5) for i in range(6, 0, -1)])
        self.final = nn.Sequential(nn.ConvTranspose2d(widths[0] * 2, 3, 4, 2, 1), nn.Tanh())

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
        x = self.ups[0](skips.pop())
        for up in self.ups[1:]:
            x = up(torch.cat([x, skips.pop()], 1))
        return self.final(torch.cat([x, skips.pop()], 1))


class PatchDiscriminator(nn.Sequential):
    def __init__(self, norm, ndf=64):
        super().__init__(Down(6, ndf, norm, use_norm=False), Down(ndf, ndf * 2, norm),
                         Down(ndf * 2, ndf * 4, norm), nn.Conv2d(ndf * 4, ndf * 8, 4, 1, 1, bias=False),
                         make_norm(norm, ndf * 8), nn.LeakyReLU(0.2, True), nn.Conv2d(ndf * 8, 1, 4, 1, 1))


class MapPairs(Dataset):
    def __init__(self, folder, train):
        self.files, self.train = sorted(Path(folder).glob("*.jpg")), train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        ab = torch.from_numpy(np.asarray(Image.open(self.files[i]).convert("RGB"))).permute(2, 0, 1)
        ab = ab.float().div(127.5).sub(1.0)
        a, b = ab[:, :, :600], ab[:, :, 600:]
        pair = F.interpolate(torch.stack([a, b]), size=(286 if self.train else 256,) * 2,
                             mode="bilinear", align_corners=False)
        if self.train:
            top, left = torch.randint(0, 31, (2,)).tolist()
            pair = pair[:, :, top:top + 256, left:left + 256]
            if torch.rand(()) < 0.5:
                pair = pair.flip(-1)
        return pair[0], pair[1]


class Pix2Pix:
    def __init__(self, args, device):
        self.G = UNetGenerator(args.norm).to(device)
        self.D = PatchDiscriminator(args.norm).to(device)
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=args.lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=args.lr, betas=(0.5, 0.999))
        self.lambda_l1 = args.lambda_l1

    def gan_loss(self, logits, real):
        target = torch.ones_like(logits) if real else torch.zeros_like(logits)
        return F.binary_cross_entropy_with_logits(logits, target)

    def d_step(self, a, b, fake):
        self.opt_d.zero_grad(set_to_none=True)
        loss_real = self.gan_loss(self.D(torch.cat([a, b], 1)), True)
        loss_fake = self.gan_loss(self.D(torch.cat([a, fake.detach()], 1)), False)
        loss_d = 0.5 * (loss_real + loss_fake)
        loss_d.backward()
        self.opt_d.step()
        return loss_d.item()

    def g_step(self, a, b, fake):
        self.opt_d.zero_grad(set_to_none=True)
        loss_gan = self.gan_loss(self.D(torch.cat([a, fake], 1)), True)
        loss_l1 = F.l1_loss(fake, b)
        loss_g = loss_gan + self.lambda_l1 * loss_l1
        loss_g.backward()
        self.opt_g.step()
        return loss_gan.item(), loss_l1.item()

    def train_epoch(self, loader, device):
        self.G.train()
        self.D.train()
        for i, (a, b) in enumerate(loader):
            a, b = a.to(device), b.to(device)
            fake = self.G(a)
            loss_d = self.d_step(a, b, fake)
            loss_gan, loss_l1 = self.g_step(a, b, fake)
            if i % 100 == 0:
                print(f"  it {i:4d} D {loss_d:.3f} G_gan {loss_gan:.3f} G_l1 {loss_l1:.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/maps")
    ap.add_argument("--norm", choices=["batch", "instance"], default="instance")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--lambda-l1", type=float, default=100.0)
    args = ap.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(MapPairs(Path(args.data) / "train", True), batch_size=1, shuffle=True, num_workers=4)
    gan = Pix2Pix(args, device)
    for epoch in range(args.epochs):
        gan.train_epoch(loader, device)
        torch.save({"G": gan.G.state_dict(), "D": gan.D.state_dict(), "epoch": epoch}, "pix2pix_maps.pt")


if __name__ == "__main__":
    main()
