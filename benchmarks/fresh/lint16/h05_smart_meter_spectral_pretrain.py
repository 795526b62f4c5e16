"""Pretrain a load-profile encoder on spectral-clustering pseudo-labels of smart-meter days."""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def load_profiles(path):
    arr = np.load(path).astype(np.float32)
    arr = arr[~np.isnan(arr).any(axis=1)]
    profiles = torch.from_numpy(arr)
    daily_mean = profiles.mean(dim=1, keepdim=True)
    daily_std = profiles.std(dim=1, keepdim=True).clamp_min(1e-3)
    return (profiles - daily_mean) / daily_std


def knn_affinity(x, k, sigma=None):
    d = torch.cdist(x, x)
    knn = d.topk(k + 1, largest=False)
    if sigma is None:
        sigma = knn.values[:, -1].median()
    w = torch.zeros_like(d)
    w.scatter_(1, knn.indices, torch.exp(-knn.values ** 2 / (2 * sigma ** 2)))
    w.fill_diagonal_(0.0)
    return torch.maximum(w, w.T)


def spectral_embedding(affinity, n_components):
    deg = affinity.sum(dim=1).clamp_min(1e-8)
    d_inv_sqrt = deg.rsqrt()
    lap = torch.eye(affinity.size(0)) - d_inv_sqrt[:, None] * affinity * d_inv_sqrt[None, :]
    evals, evecs = torch.symeig(lap, eigenvectors=True)
    emb = evecs[:, :n_components]
    return F.normalize(emb, dim=1), evals[:n_components]


def kmeans(x, k, iters=50, seed=0):
    g = torch.Generator().manual_seed(seed)
    centers = x[torch.randperm(x.size(0), generator=g)[:k]].clone()
    for _ in range(iters):
        assign = torch.cdist(x, centers).argmin(dim=1)
        for c in range(k):
            members = x[assign == c]
            if members.numel():
                centers[c] = members.mean(dim=0)
    return assign


class ProfileEncoder(nn.Module):
    def __init__(self, steps=48, width=64, emb=32):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(1, width, 5, padding=2), nn.GELU(),
            nn.Conv1d(width, width, 5, padding=2, stride=2), nn.GELU(),
            nn.Conv1d(width, width, 3, padding=1, stride=2), nn.GELU(),
        )
        self.proj = nn.Linear(width, emb)

    def forward(self, x):
        h = self.conv(x.unsqueeze(1)).mean(dim=2)
        return self.proj(h)


class PretrainNet(nn.Module):
    def __init__(self, num_clusters):
        super().__init__()
        self.encoder = ProfileEncoder()
        self.cluster_head = nn.Linear(32, num_clusters)

    def forward(self, x):
        return self.cluster_head(F.gelu(self.encoder(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profiles", default="data/meters/daily_profiles.npy")
    ap.add_argument("--clusters", type=int, default=8)
    ap.add_argument("--knn", type=int, default=15)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--out", default="pretrained/profile_encoder.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    x = load_profiles(args.profiles)
    emb, evals = spectral_embedding(knn_affinity(x, args.knn), args.clusters)
    print("smallest Laplacian eigenvalues:", [round(v, 4) for v in evals.tolist()])
    pseudo = kmeans(emb, args.clusters)
    counts = torch.bincount(pseudo, minlength=args.clusters)
    print("cluster sizes:", counts.tolist())

    loader = DataLoader(TensorDataset(x, pseudo), batch_size=args.batch_size, shuffle=True)
    model = PretrainNet(args.clusters)
    optimizer = torch.optim.AdamW(
        [{"params": [p for n, p in model.named_parameters() if p.ndim > 1], "weight_decay": 1e-4},
         {"params": [p for n, p in model.named_parameters() if p.ndim <= 1], "weight_decay": 0.0}],
        lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        total, correct, seen = 0.0, 0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * yb.size(0)
            correct += (logits.argmax(1) == yb).sum().item()
            seen += yb.size(0)
        print(f"epoch {epoch:2d}  loss {total / seen:.4f}  pseudo-label acc {correct / seen:.3f}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save(model.encoder.state_dict(), args.out)


if __name__ == "__main__":
    main()
