"""Pixel-wise land-cover mapping from a Sentinel-2 L2A stack (13 bands, 10 m grid).

Each labelled pixel is classified from the small neighbourhood centred on it. Inputs:
    scene.npy   float32 (13, H, W) reflectances      labels.npy  int16 (H, W), -1 = unlabelled
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def options():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scene", default="data/s2/scene.npy")
    ap.add_argument("--labels", default="data/s2/labels.npy")
    ap.add_argument("--patch", type=int, default=13)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--block", type=int, default=256, help="size of the spatial blocks held out together")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


class PixelPatches(Dataset):
    def __init__(self, scene, labels, coords, patch):
        r = patch // 2
        self.scene = np.pad(scene, ((0, 0), (r, r), (r, r)), mode="reflect")
        self.labels, self.coords, self.patch = labels, coords, patch

    def __len__(self):
        return len(self.coords)

    def __getitem__(self, i):
        y, x = self.coords[i]
        cube = self.scene[:, y: y + self.patch, x: x + self.patch]
        return torch.from_numpy(np.ascontiguousarray(cube)), int(self.labels[y, x])


class BandStandardizer(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, x):
        return (x - self.mean) / self.std


class SpectralSpatialNet(nn.Module):
    def __init__(self, bands, classes, mean, std):
        super().__init__()
        self.norm = BandStandardizer(mean, std)
        self.spectral = nn.Sequential(nn.Conv2d(bands, 64, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        self.spatial = nn.Sequential(
            nn.Conv2d(64, 96, 3, padding=1, bias=False), nn.BatchNorm2d(96), nn.ReLU(),
            nn.Conv2d(96, 128, 3, padding=1, bias=False), nn.BatchNorm2d(128), nn.ReLU(),
        )
        self.classify = nn.Linear(128, classes)

    def forward(self, x):
        h = self.spatial(self.spectral(self.norm(x)))
        centre = h[:, :, h.size(2) // 2, h.size(3) // 2]
        return self.classify(centre + h.mean(dim=(2, 3)))


def block_split(labels, block, seed, valid_frac=0.2):
    ys, xs = np.nonzero(labels >= 0)
    block_id = (ys // block) * (labels.shape[1] // block + 1) + xs // block
    rng = np.random.default_rng(seed)
    blocks = np.unique(block_id)
    held = set(rng.choice(blocks, int(len(blocks) * valid_frac), replace=False).tolist())
    is_valid = np.array([b in held for b in block_id])
    coords = np.stack([ys, xs], axis=1)
    return coords[~is_valid], coords[is_valid]


def run(model, loader, device, optimizer=None):
    model.train(optimizer is not None)
    correct, total, loss_sum = 0, 0, 0.0
    with torch.set_grad_enabled(optimizer is not None):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            if optimizer is not None:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            loss_sum += loss.item() * len(y)
            correct += (logits.argmax(1) == y).sum().item()
            total += len(y)
    return loss_sum / total, correct / total


def main():
    args = options()
    torch.manual_seed(args.seed)
    scene = np.load(args.scene).astype(np.float32) / 10000.0
    labels = np.load(args.labels).astype(np.int64)
    classes = int(labels.max()) + 1
    train_xy, valid_xy = block_split(labels, args.block, args.seed)
    train_pixels = scene[:, train_xy[:, 0], train_xy[:, 1]]
    mean, std = train_pixels.mean(axis=1), train_pixels.std(axis=1) + 1e-6

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(PixelPatches(scene, labels, train_xy, args.patch), args.batch, shuffle=True,
                              num_workers=4, drop_last=True)
    valid_loader = DataLoader(PixelPatches(scene, labels, valid_xy, args.patch), 2048, num_workers=4)
    model = SpectralSpatialNet(scene.shape[0], classes, mean, std).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.3)

    for epoch in range(args.epochs):
        tr_loss, tr_acc = run(model, train_loader, device, optimizer)
        va_loss, va_acc = run(model, valid_loader, device)
        scheduler.step()
        print(f"epoch {epoch:02d} train {tr_loss:.3f}/{tr_acc:.3f} valid {va_loss:.3f}/{va_acc:.3f}")
    torch.save(model.state_dict(), "s2_landcover.pt")


if __name__ == "__main__":
    main()
