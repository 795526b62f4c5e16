import argparse
import csv
from itertools import product

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split

AMINO = "ACDEFGHIKLMNPQRSTVWY"
DIPEPTIDES = ["".join(p) for p in product(AMINO, repeat=2)]


def composition(seq):
    seq = seq.upper()
    aa = [seq.count(a) / len(seq) for a in AMINO]
    pairs = [seq[i : i + 2] for i in range(len(seq) - 1)]
    di = [pairs.count(d) / max(len(pairs), 1) for d in DIPEPTIDES]
    return aa + di + [len(seq) / 50.0]


class Standardizer:
    def __init__(self, x):
        self.mean = x.mean(0)
        self.std = x.std(0).clamp_min(1e-4)

    def __call__(self, x):
        return (x - self.mean) / self.std


def read_peptides(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    x = torch.tensor([composition(r["sequence"]) for r in rows], dtype=torch.float32)
    y = torch.tensor([float(r["toxic"]) for r in rows], dtype=torch.float32)
    return x, y, [r["sequence"] for r in rows]


def make_model(n_in):
    return nn.Sequential(nn.Linear(n_in, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 1))


def validation_loss(model, loader, device):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for xb, yb in loader:
            logits = model(xb.to(device)).squeeze(1)
            total += F.binary_cross_entropy_with_logits(logits, yb.to(device)).item()
    return total / len(loader)


def train(args, device):
    x, y, _ = read_peptides(args.csv)
    scaler = Standardizer(x)
    dataset = TensorDataset(scaler(x), y)
    n_val = len(dataset) // 5
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val], generator=torch.Generator().manual_seed(13))
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=64)
    model = make_model(x.shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    best = float("inf")
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = F.binary_cross_entropy_with_logits(model(xb).squeeze(1), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val = validation_loss(model, val_loader, device)
        print(f"epoch {epoch}: val bce {val:.4f}")
        if val < best:
            best = val
            torch.save({"model": model.state_dict(), "scaler": scaler, "n_in": x.shape[1]}, args.ckpt)


def screen(args, device):
    ckpt = torch.load(args.ckpt, map_location=device)
    model = make_model(ckpt["n_in"]).to(device)
    model.load_state_dict(ckpt["model"])
    model.eval()
    x, _, seqs = read_peptides(args.csv)
    with torch.no_grad():
        probs = torch.sigmoid(model(ckpt["scaler"](x).to(device)).squeeze(1)).cpu()
    for seq, p in sorted(zip(seqs, probs.tolist()), key=lambda t: -t[1])[: args.top]:
        print(f"{seq}\t{p:.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["train", "screen"])
    parser.add_argument("--csv", default="peptides.csv")
    parser.add_argument("--ckpt", default="toxicity_mlp.pt")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train(args, device) if args.mode == "train" else screen(args, device)


if __name__ == "__main__":
    main()
