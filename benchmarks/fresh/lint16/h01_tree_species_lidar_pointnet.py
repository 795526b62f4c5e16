"""Tree species classification from terrestrial LiDAR crowns with a small PointNet."""
import argparse
import csv
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SPECIES = ["pine", "spruce", "birch", "oak", "beech", "larch"]


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def local_normals(xyz, k=8):
    dist = torch.cdist(xyz, xyz)
    idx = dist.topk(k + 1, largest=False).indices[:, 1:]
    neigh = xyz[idx]
    e1 = neigh[:, 0] - xyz
    e2 = neigh[:, k // 2] - xyz
    normals = torch.cross(e1, e2)
    return F.normalize(normals, dim=-1, eps=1e-6)


class CrownDataset(Dataset):
    def __init__(self, root, rows, num_points, augment):
        self.root = root
        self.rows = rows
        self.num_points = num_points
        self.augment = augment

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        name, label = self.rows[i]
        pts = np.load(os.path.join(self.root, name))["xyz"].astype(np.float32)
        g = torch.Generator().manual_seed(i) if not self.augment else None
        choice = torch.randint(0, pts.shape[0], (self.num_points,), generator=g)
        xyz = torch.from_numpy(pts)[choice]
        xyz = xyz - xyz.mean(dim=0, keepdim=True)
        xyz = xyz / xyz.norm(dim=1).max().clamp_min(1e-6)
        if self.augment:
            theta = torch.rand(()) * 2 * torch.pi
            c, s = torch.cos(theta), torch.sin(theta)
            rot = torch.stack([torch.stack([c, -s, torch.zeros(())]),
                               torch.stack([s, c, torch.zeros(())]),
                               torch.tensor([0.0, 0.0, 1.0])])
            xyz = xyz @ rot.T + 0.01 * torch.randn_like(xyz)
        feats = torch.cat([xyz, local_normals(xyz)], dim=1)
        return feats.T.contiguous(), label


def read_split(csv_path):
    splits = {"train": [], "val": [], "test": []}
    with open(csv_path, newline="") as fh:
        for row in csv.DictReader(fh):
            splits[row["split"]].append((row["file"], SPECIES.index(row["species"])))
    return splits


class PointNet(nn.Module):
    def __init__(self, in_ch=6, num_classes=len(SPECIES), dropout=0.4):
        super().__init__()
        self.point_mlp = nn.Sequential(
            nn.Conv1d(in_ch, 64, 1, bias=False), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 128, 1, bias=False), nn.BatchNorm1d(128), nn.ReLU(),
            nn.Conv1d(128, 512, 1, bias=False), nn.BatchNorm1d(512), nn.ReLU(),
        )
        self.head = nn.Sequential(
            nn.Linear(512, 256, bias=False), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(256, num_classes),
        )

    def forward(self, x):
        x = self.point_mlp(x)
        x = x.max(dim=2).values
        return self.head(x)


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    total, seen = 0.0, 0
    for feats, labels in loader:
        feats, labels = feats.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(feats), labels, label_smoothing=0.1)
        loss.backward()
        optimizer.step()
        total += loss.item() * labels.size(0)
        seen += labels.size(0)
    return total / max(seen, 1)


def validate(model, loader, device):
    correct, seen = 0, 0
    with torch.inference_mode():
        for feats, labels in loader:
            feats, labels = feats.to(device), labels.to(device)
            pred = model(feats).argmax(dim=1)
            correct += (pred == labels).sum().item()
            seen += labels.size(0)
    return correct / max(seen, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/crowns")
    p.add_argument("--split", default="data/crowns/split.csv")
    p.add_argument("--points", type=int, default=1024)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--out", default="runs/pointnet_species.pt")
    args = p.parse_args()

    seed_everything(7)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    splits = read_split(args.split)
    train_ds = CrownDataset(args.root, splits["train"], args.points, augment=True)
    val_ds = CrownDataset(args.root, splits["val"], args.points, augment=False)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                          num_workers=args.workers)
    val_dl = DataLoader(val_ds, batch_size=args.batch_size, num_workers=args.workers)

    model = PointNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best = 0.0
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    for epoch in range(args.epochs):
        loss = train_one_epoch(model, train_dl, optimizer, device)
        acc = validate(model, val_dl, device)
        scheduler.step()
        print(f"epoch {epoch:3d}  loss {loss:.4f}  val acc {acc:.3f}")
        if acc > best:
            best = acc
            torch.save({"model": model.state_dict(), "epoch": epoch, "val_acc": acc}, args.out)
    print(f"best val acc {best:.3f}")


if __name__ == "__main__":
    main()
