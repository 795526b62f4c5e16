"""DCGAN on 64x64 face crops stored as one uint8 array of shape (N, 64, 64, 3); uses every visible GPU."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.utils import save_image


class FaceArray(Dataset):
    def __init__(self, path):
        self.faces = np.load(path, mmap_mode="r")  # (N, 64, 64, 3) uint8

    def __len__(self):
        return self.faces.shape[0]

    def __getitem__(self, i):
        face = torch.from_numpy(np.array(self.faces[i])).float().div(127.5).sub(1.0)
        return face.view(3, 64, 64)


class Generator(nn.Module):
    def __init__(self, z_dim=128, width=64):
        super().__init__()
        self.z_dim = z_dim
        def up(cin, cout):
            return [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z_dim, 8 * width, 4, 1, 0, bias=False), nn.BatchNorm2d(8 * width), nn.ReLU(True),
            *up(8 * width, 4 * width), *up(4 * width, 2 * width), *up(2 * width, width),
            nn.ConvTranspose2d(width, 3, 4, 2, 1), nn.Tanh(),
        )

    def sample_latent(self, n, device):
        return torch.randn(n, self.z_dim, 1, 1, device=device)

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        def down(cin, cout):
            return [nn.Conv2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(0.2, True)]
        self.net = nn.Sequential(
            nn.Conv2d(3, width, 4, 2, 1), nn.LeakyReLU(0.2, True),
            *down(width, 2 * width), *down(2 * width, 4 * width), *down(4 * width, 8 * width),
            nn.Conv2d(8 * width, 1, 4, 1, 0),
        )

    def forward(self, x):
        return self.net(x).flatten()  # one logit per image


def dcgan_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/faces64.npy")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--out", default="dcgan_out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    loader = DataLoader(FaceArray(args.data), batch_size=args.batch, shuffle=True, num_workers=8, drop_last=True)
    netG, netD = Generator().to(device), Discriminator().to(device)
    netG.apply(dcgan_init)
    netD.apply(dcgan_init)
    if torch.cuda.device_count() > 1:
        netG, netD = nn.DataParallel(netG), nn.DataParallel(netD)

    bce = nn.BCEWithLogitsLoss()
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_z = netG.sample_latent(64, device)

    for epoch in range(args.epochs):
        for step, real in enumerate(loader):
            real = real.to(device, non_blocking=True)
            b = real.size(0)
            ones, zeros = torch.ones(b, device=device), torch.zeros(b, device=device)
            fake = netG(netG.sample_latent(b, device))

            optD.zero_grad()
            d_loss = bce(netD(real), ones) + bce(netD(fake.detach()), zeros)
            d_loss.backward()
            optD.step()

            optG.zero_grad()
            g_loss = bce(netD(fake), ones)
            g_loss.backward()
            optG.step()
            if step % 200 == 0:
                print(f"epoch {epoch} step {step}: D {d_loss.item():.3f} G {g_loss.item():.3f}")

        netG.eval()
        with torch.no_grad():
            save_image(netG(fixed_z), f"{args.out}/epoch_{epoch:03d}.png", nrow=8, normalize=True, value_range=(-1, 1))
        netG.train()
        torch.save({"G": getattr(netG, "module", netG).state_dict(), "D": getattr(netD, "module", netD).state_dict()},
                   f"{args.out}/dcgan.pt")


if __name__ == "__main__":
    main()
