"""Click-through-rate model for sponsored listings: hashed categorical fields + log-scaled counts,
a factorisation-machine term and a small MLP. After training, the GPU is handed to the
calibration job, which runs as a separate process.
"""
import argparse
import gc
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def hashed(ids, buckets):
    return np.remainder(ids, buckets).astype(np.int64)


def load_split(path, buckets):
    d = np.load(path)
    cats = torch.from_numpy(hashed(d["categorical"], buckets))
    counts = torch.log1p(torch.from_numpy(d["counts"].astype(np.float32)).clamp(min=0))
    clicks = torch.from_numpy(d["clicked"].astype(np.float32))
    return TensorDataset(cats, counts, clicks)


class FMNet(nn.Module):
    def __init__(self, n_fields, buckets, n_counts, dim=16, hidden=128):
        super().__init__()
        self.buckets = buckets
        self.embed = nn.Embedding(n_fields * buckets, dim)
        self.linear = nn.Embedding(n_fields * buckets, 1)
        self.register_buffer("field_offset", torch.arange(n_fields) * buckets)
        self.count_proj = nn.Linear(n_counts, dim)
        self.mlp = nn.Sequential(nn.Linear((n_fields + 1) * dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        nn.init.normal_(self.embed.weight, std=0.01)
        nn.init.zeros_(self.linear.weight)

    def forward(self, cats, counts):
        if torch.any((cats < 0) | (cats >= self.buckets)):
            raise ValueError("categorical id outside the hashed range")
        idx = cats + self.field_offset
        v = torch.cat([self.embed(idx), self.count_proj(counts).unsqueeze(1)], dim=1)
        fm = 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(1)
        return self.linear(idx).sum(dim=(1, 2)) + fm + self.mlp(v.flatten(1)).squeeze(1)


@torch.no_grad()
def log_loss(model, loader, device):
    model.eval()
    total, n = 0.0, 0
    for cats, counts, y in loader:
        cats, counts, y = cats.to(device), counts.to(device), y.to(device)
        total += F.binary_cross_entropy_with_logits(model(cats, counts), y, reduction="sum").item()
        n += len(y)
    return total / n


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/ctr_train.npz")
    ap.add_argument("--valid", default="data/ctr_valid.npz")
    ap.add_argument("--buckets", type=int, default=100003)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--out", default="runs/ctr")
    ap.add_argument("--calibrate", default="calibrate_ctr.py")
    args = ap.parse_args(argv)

    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = load_split(args.train, args.buckets)
    valid_set = load_split(args.valid, args.buckets)
    n_fields, n_counts = train_set.tensors[0].shape[1], train_set.tensors[1].shape[1]
    train_dl = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, pin_memory=device.type == "cuda")
    valid_dl = DataLoader(valid_set, batch_size=args.batch_size)
    model = FMNet(n_fields, args.buckets, n_counts).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for epoch in range(args.epochs):
        model.train()
        for cats, counts, y in train_dl:
            cats = cats.to(device, non_blocking=True)
            counts = counts.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            loss = F.binary_cross_entropy_with_logits(model(cats, counts), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: valid log-loss {log_loss(model, valid_dl, device):.5f}")
    torch.save(model.state_dict(), out / "fmnet.pt")

    del model, optimizer
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    if Path(args.calibrate).exists():
        subprocess.run([sys.executable, args.calibrate, "--model", str(out / "fmnet.pt"), "--data", args.valid], check=True)


if __name__ == "__main__":
    main()
