"""DCGAN on 64x64 Galaxy Zoo cut-outs (Radford et al. architecture), with label smoothing on
the real targets. Produces sample grids every few hundred steps.

python m14_galaxy_dcgan.py --images data/galaxy_zoo/images --epochs 25
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--images", default="data/galaxy_zoo/images")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--nz", type=int, default=100)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--real-label", type=float, default=0.9)
    p.add_argument("--out", default="samples/galaxy_dcgan")
    return p.parse_args()


class GalaxyCutouts(Dataset):
    def __init__(self, folder, size=64, crop=212):
        self.paths = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".jpg"))
        self.size, self.crop = size, crop

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = Image.open(self.paths[i]).convert("RGB")
        w, h = img.size
        left, top = (w - self.crop) // 2, (h - self.crop) // 2
        img = img.crop((left, top, left + self.crop, top + self.crop)).resize((self.size, self.size), Image.BICUBIC)
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 127.5 - 1.0).permute(2, 0, 1)
        k = int(torch.randint(0, 4, ()).item())
        return torch.rot90(x, k, dims=(1, 2))


def weights_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def generator(nz, ngf=64):
    return nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
        nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def discriminator(ndf=64):
    return nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Flatten(),
    )


class GANTrainer:
    def __init__(self, args, device):
        self.args, self.device = args, device
        self.G, self.D = generator(args.nz).to(device), discriminator().to(device)
        self.G.apply(weights_init)
        self.D.apply(weights_init)
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=args.lr, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=args.lr, betas=(0.5, 0.999))
        self.fixed_noise = torch.randn(64, args.nz, 1, 1, device=device)

    def d_step(self, real, fake):
        real_logits = self.D(real)
        fake_logits = self.D(fake)
        loss = (F.binary_cross_entropy_with_logits(real_logits, torch.full_like(real_logits, self.args.real_label))
                + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
        self.opt_d.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_d.step()
        return loss.item()

    def g_step(self, fake):
        logits = self.D(fake)
        loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
        self.opt_g.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_g.step()
        return loss.item()

    def train_step(self, real):
        z = torch.randn(real.shape[0], self.args.nz, 1, 1, device=self.device)
        fake = self.G(z)
        return self.d_step(real, fake), self.g_step(fake)

    def save_grid(self, step):
        self.G.eval()
        with torch.no_grad():
            imgs = ((self.G(self.fixed_noise) + 1) * 127.5).clamp(0, 255).round().to(torch.uint8).cpu()
        self.G.train()
        rows = [torch.cat(list(imgs[r * 8:(r + 1) * 8]), dim=2) for r in range(8)]
        grid = torch.cat(rows, dim=1).permute(1, 2, 0).numpy()
        Image.fromarray(grid).save(os.path.join(self.args.out, f"step_{step:06d}.png"))


def main():
    args = get_args()
    torch.manual_seed(999)
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(GalaxyCutouts(args.images), batch_size=args.batch_size, shuffle=True,
                        num_workers=4, drop_last=True)
    trainer = GANTrainer(args, device)
    step = 0
    for epoch in range(args.epochs):
        for real in loader:
            loss_d, loss_g = trainer.train_step(real.to(device))
            step += 1
            if step % 200 == 0:
                print(f"epoch {epoch} step {step}  D {loss_d:.3f}  G {loss_g:.3f}")
                trainer.save_grid(step)
    torch.save(trainer.G.state_dict(), os.path.join(args.out, "generator.pt"))


if __name__ == "__main__":
    main()
