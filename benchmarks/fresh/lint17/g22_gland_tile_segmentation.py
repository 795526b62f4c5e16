"""Segment colon glands in H&E whole-slide tiles (background / benign gland / malignant gland).

Tiles are cut at random positions from large slide regions stored as uint8 arrays; the
image and its label map are cropped, flipped and rotated together. Loading runs in worker
processes, each with its own random stream.
"""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, get_worker_info

MEAN = np.array([0.74, 0.53, 0.71], dtype=np.float32)
STD = np.array([0.16, 0.20, 0.15], dtype=np.float32)


def crop_box(array, top, left, size):
    index = [slice(None)] * array.ndim
    index[0] = slice(top, top + size)
    index[1] = slice(left, left + size)
    return array[tuple(index)]


class RegionTiles(Dataset):
    def __init__(self, regions, labels, tile, tiles_per_region, base_seed):
        self.regions, self.labels = regions, labels
        self.tile = tile
        self.tiles_per_region = tiles_per_region
        self.base_seed = base_seed
        self.rng = np.random.default_rng(base_seed)

    def reseed(self, seed):
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.regions) * self.tiles_per_region

    def __getitem__(self, idx):
        r = idx // self.tiles_per_region
        region, label = self.regions[r], self.labels[r]
        h, w = label.shape
        size = min(self.tile, h, w)
        top = int(self.rng.integers(0, h - size + 1))
        left = int(self.rng.integers(0, w - size + 1))
        image = crop_box(region, top, left, size).astype(np.float32) / 255.0
        target = crop_box(label, top, left, size)
        k = int(self.rng.integers(0, 4))
        image, target = np.rot90(image, k, axes=(0, 1)), np.rot90(target, k, axes=(0, 1))
        if self.rng.random() < 0.5:
            image, target = image[:, ::-1], target[:, ::-1]
        image = (image - MEAN) / STD
        x = torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)))
        y = torch.from_numpy(np.ascontiguousarray(target).astype(np.int64))
        return x, y


def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.reseed(info.seed % 2 ** 32)


class TinySegNet(nn.Module):
    def __init__(self, n_classes=3, c=32):
        super().__init__()
        def cbr(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.enc1, self.enc2 = cbr(3, c), cbr(c, 2 * c)
        self.mid = cbr(2 * c, 2 * c)
        self.dec = cbr(3 * c, c)
        self.head = nn.Conv2d(c, n_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        m = self.mid(self.enc2(F.max_pool2d(e1, 2)))
        up = F.interpolate(m, size=e1.shape[-2:], mode="bilinear", align_corners=False)
        return self.head(self.dec(torch.cat([up, e1], dim=1)))


@torch.no_grad()
def mean_iou(model, loader, n_classes, device):
    model.eval()
    confusion = torch.zeros(n_classes * n_classes, dtype=torch.long)
    for x, y in loader:
        pred = model(x.to(device)).argmax(dim=1).cpu()
        confusion += torch.bincount((y * n_classes + pred).flatten(), minlength=n_classes * n_classes)
    confusion = confusion.view(n_classes, n_classes).double()
    inter = confusion.diag()
    union = confusion.sum(0) + confusion.sum(1) - inter
    return (inter / union.clamp(min=1)).mean().item()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/glas_regions.npz")
    ap.add_argument("--tile", type=int, default=256)
    ap.add_argument("--tiles-per-region", type=int, default=32)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--out", default="runs/glands/segnet.pt")
    args = ap.parse_args(argv)

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    d = np.load(args.data)
    train_set = RegionTiles(d["train_regions"], d["train_labels"], args.tile, args.tiles_per_region, args.seed)
    valid_set = RegionTiles(d["valid_regions"], d["valid_labels"], args.tile, 4, args.seed + 1)
    train_dl = DataLoader(train_set, batch_size=8, shuffle=True, num_workers=args.workers, drop_last=True,
                          worker_init_fn=seed_worker, generator=torch.Generator().manual_seed(args.seed))
    valid_dl = DataLoader(valid_set, batch_size=8)

    model = TinySegNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    class_weight = torch.tensor([0.5, 1.0, 1.5], device=device)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y, weight=class_weight)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        miou = mean_iou(model, valid_dl, 3, device)
        print(f"epoch {epoch}: valid mIoU {miou:.4f}")
        if miou > best:
            best = miou
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
