"""Count cells in fluorescence microscopy fields by regressing a density map.

Each field has a dot annotation per nucleus; the target is the dot map blurred with a
Gaussian, so that its integral is the cell count. Training uses random crops and flips.
"""
import argparse
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def gaussian_kernel(sigma):
    radius = int(3 * sigma)
    ax = torch.arange(-radius, radius + 1, dtype=torch.float32)
    g = torch.exp(-(ax ** 2) / (2 * sigma ** 2))
    k = torch.outer(g, g)
    return (k / k.sum())[None, None]


class DotFields(Dataset):
    def __init__(self, images, dots, crop, sigma=2.0, train=True, seed=0):
        self.images = images.astype(np.float32) / 255.0
        self.dots = dots.astype(np.float32)
        self.crop = crop
        self.train = train
        self.kernel = gaussian_kernel(sigma)
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.images) * (8 if self.train else 1)

    def density(self, dots):
        d = torch.from_numpy(dots)[None, None]
        return F.conv2d(d, self.kernel, padding=self.kernel.shape[-1] // 2)[0]

    def __getitem__(self, idx):
        i = idx % len(self.images)
        image, dots = self.images[i], self.dots[i]
        if self.train:
            h, w = image.shape
            top = self.rng.integers(0, h - self.crop + 1)
            left = self.rng.integers(0, w - self.crop + 1)
            image = image[top:top + self.crop, left:left + self.crop]
            dots = dots[top:top + self.crop, left:left + self.crop]
            if self.rng.random() < 0.5:
                image, dots = image[:, ::-1], dots[:, ::-1]
            if self.rng.random() < 0.5:
                image, dots = image[::-1], dots[::-1]
        image = np.ascontiguousarray(image)
        dots = np.ascontiguousarray(dots)
        x = torch.from_numpy((image - image.mean()) / (image.std() + 1e-6))[None]
        return x, self.density(dots)


class DensityFCN(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        def cbr(i, o, d=1):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=d, dilation=d, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.body = nn.Sequential(cbr(1, width), cbr(width, width), cbr(width, 2 * width, 2),
                                  cbr(2 * width, 2 * width, 4), cbr(2 * width, width, 2))
        self.out = nn.Conv2d(width, 1, 1)

    def forward(self, x):
        return F.softplus(self.out(self.body(x)))


def count_error(model, loader, scale, device):
    model.eval()
    errors = []
    with torch.no_grad():
        for x, density in loader:
            pred = model(x.to(device)).sum(dim=(1, 2, 3)).cpu() / scale
            errors.append((pred - density.sum(dim=(1, 2, 3))).abs())
    return torch.cat(errors).mean().item()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/nuclei_fields.npz")
    ap.add_argument("--crop", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--density-scale", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/cells")
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = np.load(args.data)
    train_set = DotFields(data["train_images"], data["train_dots"], args.crop, seed=args.seed)
    valid_set = DotFields(data["valid_images"], data["valid_dots"], args.crop, train=False)
    train_dl = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                          drop_last=True, persistent_workers=args.workers > 0)
    valid_dl = DataLoader(valid_set, batch_size=1)

    model = DensityFCN().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.3)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    best = math.inf
    for epoch in range(args.epochs):
        model.train()
        for x, density in train_dl:
            x, density = x.to(device), density.to(device) * args.density_scale
            loss = F.mse_loss(model(x), density)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        mae = count_error(model, valid_dl, args.density_scale, device)
        print(f"epoch {epoch}: valid count MAE {mae:.2f}")
        if mae < best:
            best = mae
            torch.save(model.state_dict(), out / "density_fcn.pt")


if __name__ == "__main__":
    main()
