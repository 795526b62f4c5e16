"""Crack detection on electroluminescence images of solar cells (defective vs. functional)."""
import argparse
import csv
import os
import random

import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "image_size": 160,
    "widths": [24, 48, 96, 192],
    "head_activation": "sigmoid",
    "dropout": 0.3,
    "pos_weight": 2.5,
    "threshold": 0.5,
}


class ELCells(Dataset):
    def __init__(self, labels_csv, root, size, train):
        with open(labels_csv, newline="") as fh:
            self.rows = [(r["path"], float(r["defect_probability"]) >= 0.5) for r in csv.DictReader(fh)]
        self.root, self.size, self.train = root, size, train

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        rel, defective = self.rows[i]
        img = Image.open(os.path.join(self.root, rel)).convert("L").resize((self.size, self.size))
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0)[None]
        if self.train:
            if torch.rand(()) < 0.5:
                x = x.flip(-1)
            if torch.rand(()) < 0.5:
                x = x.flip(-2)
        x = (x - x.mean()) / x.std().clamp_min(1e-6)
        return x, torch.tensor(float(defective))


ACTIVATIONS = {"sigmoid": nn.Sigmoid, "identity": nn.Identity}


def make_head(in_features, dropout, activation):
    return nn.Sequential(nn.Dropout(dropout), nn.Linear(in_features, 1), ACTIVATIONS[activation]())


class CellNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        layers, cin = [], 1
        for w in cfg["widths"]:
            layers += [nn.Conv2d(cin, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                       nn.Conv2d(w, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                       nn.MaxPool2d(2)]
            cin = w
        self.features = nn.Sequential(*layers)
        self.head = make_head(cin, cfg["dropout"], cfg["head_activation"])

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3))).squeeze(1)


@torch.no_grad()
def evaluate(model, loader, threshold, device):
    model.eval()
    tp = fp = tn = fn = 0
    for x, y in loader:
        pred = model(x.to(device)).cpu() > threshold
        y = y.bool()
        tp += (pred & y).sum().item()
        fp += (pred & ~y).sum().item()
        tn += (~pred & ~y).sum().item()
        fn += (~pred & y).sum().item()
    return {"acc": (tp + tn) / max(tp + tn + fp + fn, 1), "recall": tp / max(tp + fn, 1),
            "precision": tp / max(tp + fp, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/elpv")
    ap.add_argument("--epochs", type=int, default=35)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="checkpoints/el_cracks.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    size = CONFIG["image_size"]
    train_dl = DataLoader(ELCells(os.path.join(args.root, "train.csv"), args.root, size, True),
                          batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(ELCells(os.path.join(args.root, "val.csv"), args.root, size, False),
                        batch_size=args.batch_size)

    model = CellNet(CONFIG).to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(CONFIG["pos_weight"], device=device))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=3)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        metrics = evaluate(model, val_dl, CONFIG["threshold"], device)
        scheduler.step(metrics["recall"])
        print(f"epoch {epoch}: " + "  ".join(f"{k} {v:.3f}" for k, v in metrics.items()))
        if metrics["recall"] > best:
            best = metrics["recall"]
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
