import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SAFFIR_SIMPSON = {1: "119-153 km/h", 2: "154-177 km/h", 3: "178-208 km/h", 4: "209-251 km/h", 5: ">=252 km/h"}


def read_index(path):
    with open(path, newline="") as f:
        return [(row["frame"], int(row["category"]), row["storm_id"]) for row in csv.DictReader(f)]


class IRFrames(Dataset):
    def __init__(self, root, rows, flip=False):
        self.root, self.rows, self.flip = Path(root), rows, flip

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        frame, category, _ = self.rows[i]
        kelvin = np.load(self.root / f"{frame}.npy").astype(np.float32)
        x = torch.from_numpy((kelvin - 240.0) / 40.0)[None]
        if self.flip and torch.rand(()) < 0.5:
            x = torch.flip(x, dims=[1])
        return x, category


class EyeCNN(nn.Module):
    def __init__(self, n_out):
        super().__init__()
        chans = [1, 24, 48, 96, 192]
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 5, padding=2) for a, b in zip(chans, chans[1:]))
        self.norms = nn.ModuleList(nn.GroupNorm(8, b) for b in chans[1:])
        self.fc = nn.Linear(chans[-1], n_out)

    def forward(self, x):
        for conv, norm in zip(self.convs, self.norms):
            x = F.max_pool2d(F.gelu(norm(conv(x))), 2)
        return self.fc(x.mean(dim=(2, 3)))


def split_by_storm(rows, val_fraction=0.2, seed=0):
    storms = sorted({r[2] for r in rows})
    rng = np.random.default_rng(seed)
    val = set(rng.choice(storms, int(len(storms) * val_fraction), replace=False))
    return [r for r in rows if r[2] not in val], [r for r in rows if r[2] in val]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/typhoon_ir")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    torch.manual_seed(5)
    rows = read_index(Path(args.root) / "frames.csv")
    train_rows, val_rows = split_by_storm(rows)
    train_dl = DataLoader(IRFrames(args.root, train_rows, flip=True), batch_size=48, shuffle=True, num_workers=4)
    val_dl = DataLoader(IRFrames(args.root, val_rows), batch_size=96, num_workers=4)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = EyeCNN(n_out=len(SAFFIR_SIMPSON)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    for epoch in range(args.epochs):
        model.train()
        for x, cat in train_dl:
            x, cat = x.to(device), cat.to(device)
            loss = F.cross_entropy(model(x), cat)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        exact = off_by_one = n = 0
        with torch.no_grad():
            for x, cat in val_dl:
                pred = model(x.to(device)).argmax(1).cpu()
                exact += (pred == cat).sum().item()
                off_by_one += ((pred - cat).abs() <= 1).sum().item()
                n += len(cat)
        print(f"epoch {epoch} exact {exact / n:.3f} within one category {off_by_one / n:.3f}")
    torch.save(model.state_dict(), Path(args.root) / "eye_cnn.pt")


if __name__ == "__main__":
    main()
