import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BANDS = ["red", "green", "blue", "nir", "viirs_radiance"]


class ClusterTiles(Dataset):
    def __init__(self, root, rows, stats):
        self.root, self.rows = Path(root), rows
        self.mean = torch.tensor(stats["mean"]).view(-1, 1, 1)
        self.std = torch.tensor(stats["std"]).view(-1, 1, 1)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        tile = torch.from_numpy(np.load(self.root / "tiles" / f"{row['cluster_id']}.npy").astype(np.float32))
        return (tile - self.mean) / self.std, torch.tensor(float(row["wealth_index"]))


class WealthRegressor(nn.Module):
    def __init__(self, in_ch=len(BANDS), width=64):
        super().__init__()
        def block(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(),
                                 nn.Conv2d(b, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(),
                                 nn.MaxPool2d(2))
        self.features = nn.Sequential(block(in_ch, width), block(width, 2 * width), block(2 * width, 4 * width),
                                      block(4 * width, 4 * width))
        self.out = nn.Linear(4 * width, 1)

    def forward(self, x):
        return self.out(self.features(x).mean(dim=(2, 3))).squeeze(-1)


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def r2(model, loader, device):
    model.eval()
    preds, ys = [], []
    with torch.no_grad():
        for x, y in loader:
            preds.append(model(x.to(device)).cpu())
            ys.append(y)
    p, t = torch.cat(preds), torch.cat(ys)
    return 1 - ((p - t) ** 2).sum().item() / ((t - t.mean()) ** 2).sum().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/dhs_clusters")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--accumulate", type=int, default=8)
    ap.add_argument("--base-lr", type=float, default=1e-3)
    args = ap.parse_args()

    torch.manual_seed(21)
    root = Path(args.root)
    stats = {"mean": [0.08, 0.09, 0.07, 0.25, 1.9], "std": [0.04, 0.04, 0.04, 0.09, 6.3]}
    train_dl = DataLoader(ClusterTiles(root, rows_of(root / "train.csv"), stats), batch_size=args.micro_batch,
                          shuffle=True, drop_last=True, num_workers=4)
    val_dl = DataLoader(ClusterTiles(root, rows_of(root / "val.csv"), stats), batch_size=32, num_workers=4)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = WealthRegressor().to(device)
    effective_batch = args.micro_batch * args.accumulate
    optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr * effective_batch / 64, momentum=0.9)

    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        for step, (x, y) in enumerate(train_dl):
            loss = F.smooth_l1_loss(model(x.to(device)), y.to(device))
            loss.backward()
            if (step + 1) % args.accumulate == 0:
                nn.utils.clip_grad_norm_(model.parameters(), 2.0)
                optimizer.step()
                optimizer.zero_grad()
        print(f"epoch {epoch} val r2 {r2(model, val_dl, device):.3f}")
    torch.save(model.state_dict(), root / "wealth_regressor.pt")


if __name__ == "__main__":
    main()
