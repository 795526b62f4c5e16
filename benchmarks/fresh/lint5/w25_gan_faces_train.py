"""DCGAN on 64x64 CelebA crops."""

import argparse
import os

import torch
import torch.nn as nn
import torchvision.utils as vutils
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

NZ, NGF, NDF = 100, 64, 64


def init_weights(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def generator():
    def up(cin, cout):
        return [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]

    return nn.Sequential(
        nn.ConvTranspose2d(NZ, NGF * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(NGF * 8), nn.ReLU(True),
        *up(NGF * 8, NGF * 4), *up(NGF * 4, NGF * 2), *up(NGF * 2, NGF),
        nn.ConvTranspose2d(NGF, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )


def discriminator():
    def down(cin, cout):
        return [nn.Conv2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(0.2, True)]

    return nn.Sequential(
        nn.Conv2d(3, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        *down(NDF, NDF * 2), *down(NDF * 2, NDF * 4), *down(NDF * 4, NDF * 8),
        nn.Conv2d(NDF * 8, 1, 4, 1, 0, bias=False), nn.Flatten(0),
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/celeba")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--out", default="dcgan_out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    tf = transforms.Compose([transforms.Resize(64), transforms.CenterCrop(64), transforms.ToTensor(),
                             transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    loader = DataLoader(datasets.ImageFolder(args.data, tf), batch_size=args.batch, shuffle=True,
                        num_workers=4, drop_last=True)
    G, D = generator().to(device), discriminator().to(device)
    G.apply(init_weights)
    D.apply(init_weights)
    criterion = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_noise = torch.randn(64, NZ, 1, 1, device=device)
    real_label, fake_label = 0.9, 0.0
    log_d, log_g = [], []

    for epoch in range(args.epochs):
        for i, (real, _) in enumerate(loader):
            real = real.to(device)
            b = real.size(0)
            fake = G(torch.randn(b, NZ, 1, 1, device=device))

            opt_d.zero_grad()
            loss_d = criterion(D(real), torch.full((b,), real_label, device=device)) + \
                criterion(D(fake.detach()), torch.full((b,), fake_label, device=device))
            loss_d.backward()
            opt_d.step()

            opt_g.zero_grad()
            loss_g = criterion(D(fake), torch.ones(b, device=device))
            loss_g.backward()
            opt_g.step()

            log_d.append(loss_d.item())
            log_g.append(loss_g.item())
            if i % 200 == 0:
                print(f"[{epoch}/{args.epochs}][{i}/{len(loader)}] D {loss_d.item():.3f} G {loss_g.item():.3f}")

        G.eval()
        with torch.no_grad():
            grid = G(fixed_noise).cpu()
        G.train()
        vutils.save_image(grid, f"{args.out}/epoch_{epoch:03d}.png", normalize=True, nrow=8)
        torch.save({"G": G.state_dict(), "D": D.state_dict()}, f"{args.out}/dcgan_{epoch:03d}.pt")


if __name__ == "__main__":
    main()
