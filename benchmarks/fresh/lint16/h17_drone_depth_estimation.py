"""Monocular depth estimation for low-altitude drone frames (RGB .npy frames + LiDAR depth)."""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CFG = {
    "height": 192,
    "width": 256,
    "channels": 3,
    "min_depth": 0.5,
    "max_depth": 80.0,
    "rgb_mean": [0.43, 0.45, 0.41],
    "rgb_std": [0.21, 0.20, 0.22],
}


class DroneFrames(Dataset):
    def __init__(self, root, split, cfg, train):
        with open(os.path.join(root, f"{split}.txt")) as fh:
            self.names = [l.strip() for l in fh if l.strip()]
        self.root, self.cfg, self.train = root, cfg, train
        self.mean = torch.tensor(cfg["rgb_mean"]).view(3, 1, 1)
        self.std = torch.tensor(cfg["rgb_std"]).view(3, 1, 1)

    def __len__(self):
        return len(self.names)

    def load_rgb(self, name):
        frame = np.load(os.path.join(self.root, "rgb", name + ".npy"))
        rgb = torch.from_numpy(frame).float().div_(255.0)
        return rgb.reshape(self.cfg["channels"], self.cfg["height"], self.cfg["width"])

    def __getitem__(self, i):
        name = self.names[i]
        rgb = self.load_rgb(name)
        depth = torch.from_numpy(np.load(os.path.join(self.root, "depth", name + ".npy"))).float()[None]
        if self.train and torch.rand(()) < 0.5:
            rgb, depth = rgb.flip(-1), depth.flip(-1)
        valid = (depth > self.cfg["min_depth"]) & (depth < self.cfg["max_depth"])
        return (rgb - self.mean) / self.std, depth, valid


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DepthUNet(nn.Module):
    def __init__(self, base=32, max_depth=80.0):
        super().__init__()
        self.e1, self.e2, self.e3 = block(3, base), block(base, 2 * base), block(2 * base, 4 * base)
        self.mid = block(4 * base, 8 * base)
        self.d3, self.d2, self.d1 = block(12 * base, 4 * base), block(6 * base, 2 * base), block(3 * base, base)
        self.head = nn.Conv2d(base, 1, 1)
        self.max_depth = max_depth

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(F.max_pool2d(e1, 2))
        e3 = self.e3(F.max_pool2d(e2, 2))
        m = self.mid(F.max_pool2d(e3, 2))
        up = lambda t, ref: F.interpolate(t, size=ref.shape[-2:], mode="bilinear", align_corners=False)
        d3 = self.d3(torch.cat([up(m, e3), e3], 1))
        d2 = self.d2(torch.cat([up(d3, e2), e2], 1))
        d1 = self.d1(torch.cat([up(d2, e1), e1], 1))
        return torch.sigmoid(self.head(d1)) * self.max_depth


def silog_loss(pred, target, valid, lam=0.85):
    d = torch.log(pred[valid].clamp_min(1e-3)) - torch.log(target[valid])
    return torch.sqrt((d ** 2).mean() - lam * d.mean() ** 2 + 1e-8) * 10.0


@torch.no_grad()
def abs_rel(model, loader, device):
    model.eval()
    total, n = 0.0, 0
    for rgb, depth, valid in loader:
        pred = model(rgb.to(device)).cpu()
        total += ((pred[valid] - depth[valid]).abs() / depth[valid]).sum().item()
        n += valid.sum().item()
    return total / max(n, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/drone_depth")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--out", default="checkpoints/drone_depth.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(DroneFrames(args.root, "train", CFG, True), batch_size=args.batch_size,
                          shuffle=True, drop_last=True)
    val_dl = DataLoader(DroneFrames(args.root, "val", CFG, False), batch_size=args.batch_size)
    model = DepthUNet(max_depth=CFG["max_depth"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.3)
    best = float("inf")
    for epoch in range(args.epochs):
        model.train()
        for rgb, depth, valid in train_dl:
            rgb, depth, valid = rgb.to(device), depth.to(device), valid.to(device)
            optimizer.zero_grad()
            loss = silog_loss(model(rgb), depth, valid)
            loss.backward()
            optimizer.step()
        scheduler.step()
        err = abs_rel(model, val_dl, device)
        print(f"epoch {epoch}: val AbsRel {err:.4f}")
        if err < best:
            best = err
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
