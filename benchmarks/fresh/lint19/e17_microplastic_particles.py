import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

POLYMERS = ["PE", "PP", "PS", "PET", "PVC", "PA", "non_plastic"]


def make_model(n_classes, width=32):
    return nn.Sequential(
        nn.Conv2d(2, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.BatchNorm2d(4 * width), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.25), nn.Linear(4 * width, n_classes),
    )


def views(x):
    yield x
    yield torch.flip(x, dims=[3])
    yield torch.rot90(x, 1, dims=(2, 3))
    yield torch.rot90(x, 3, dims=(2, 3))


def predict_tta(model, loader, device):
    model.eval()
    all_probs = []
    for (x,) in loader:
        x = x.to(device)
        probs = torch.stack([F.softmax(model(v), dim=1) for v in views(x)]).mean(0)
        all_probs.append(probs.cpu())
    return torch.cat(all_probs)


def load_npz(path, with_labels=True):
    d = np.load(path)
    x = torch.from_numpy(d["patches"].astype(np.float32))
    x = torch.stack([x[:, 0] / 255.0, (x[:, 1] - 500.0) / 300.0], dim=1)
    if with_labels:
        return TensorDataset(x, torch.from_numpy(d["polymer"]).long())
    return TensorDataset(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("data/microplastics"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=2e-3)
    args = ap.parse_args()

    torch.manual_seed(6)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(load_npz(args.data / "train.npz"), batch_size=128, shuffle=True)
    val = load_npz(args.data / "val.npz")
    val_dl = DataLoader(val, batch_size=256)
    model = make_model(len(POLYMERS)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            acc = sum((model(x.to(device)).argmax(1).cpu() == y).sum().item() for x, y in val_dl) / len(val)
        print(f"epoch {epoch} val accuracy {acc:.3f}")

    test_dl = DataLoader(load_npz(args.data / "test_unlabelled.npz", with_labels=False), batch_size=256)
    probs = predict_tta(model, test_dl, device)
    pred = probs.argmax(1)
    counts = torch.bincount(pred, minlength=len(POLYMERS))
    for name, c in zip(POLYMERS, counts.tolist()):
        print(f"{name:12s} {c:6d} particles")
    torch.save({"polymers": POLYMERS, "probs": probs}, args.data / "test_probs.pt")


if __name__ == "__main__":
    main()
