"""Differentially private triage-urgency classifier on hashed clinical-note features (DP-SGD)."""
import argparse
import csv
import hashlib
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from functorch import grad, make_functional, vmap
from torch.utils.data import DataLoader, TensorDataset

URGENCY = ["routine", "soon", "urgent", "emergency"]


def hash_features(text, dim):
    vec = torch.zeros(dim)
    tokens = text.lower().split()
    for tok in tokens + [a + "_" + b for a, b in zip(tokens, tokens[1:])]:
        h = int(hashlib.md5(tok.encode()).hexdigest(), 16)
        vec[h % dim] += 1.0 if (h >> 64) & 1 else -1.0
    return vec / max(math.sqrt(len(tokens)), 1.0)


def load_notes(path, dim):
    feats, labels = [], []
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            feats.append(hash_features(row["note"], dim))
            labels.append(URGENCY.index(row["urgency"]))
    return torch.stack(feats), torch.tensor(labels)


class TriageMLP(nn.Module):
    def __init__(self, dim, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, len(URGENCY)))

    def forward(self, x):
        return self.net(x)


class DPSGD:
    def __init__(self, model, lr, clip, noise_multiplier, batch_size):
        self.fmodel, self.params = make_functional(model)
        self.params = tuple(p.detach().requires_grad_(False) for p in self.params)
        self.lr, self.clip, self.sigma, self.batch_size = lr, clip, noise_multiplier, batch_size

        def loss_one(params, x, y):
            logits = self.fmodel(params, x.unsqueeze(0))
            return F.cross_entropy(logits, y.unsqueeze(0))

        self.per_sample_grads = vmap(grad(loss_one), in_dims=(None, 0, 0))

    def step(self, x, y):
        grads = self.per_sample_grads(self.params, x, y)
        norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads))
        factor = (self.clip / (norms + 1e-6)).clamp(max=1.0)
        new_params = []
        for p, g in zip(self.params, grads):
            clipped = (g * factor.view(-1, *([1] * (g.dim() - 1)))).sum(0)
            noisy = clipped + torch.randn_like(p) * self.sigma * self.clip
            new_params.append(p - self.lr * noisy / self.batch_size)
        self.params = tuple(new_params)

    def predict(self, x):
        with torch.no_grad():
            return self.fmodel(self.params, x)


def epsilon_estimate(steps, q, sigma, delta):
    return q * math.sqrt(steps * math.log(1 / delta)) / sigma


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/triage/train.csv")
    ap.add_argument("--test", default="data/triage/test.csv")
    ap.add_argument("--dim", type=int, default=2048)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--sigma", type=float, default=1.1)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--out", default="models/triage_dp.pt")
    args = ap.parse_args()

    torch.manual_seed(0)
    x_tr, y_tr = load_notes(args.train, args.dim)
    x_te, y_te = load_notes(args.test, args.dim)
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True,
                        drop_last=True)

    model = TriageMLP(args.dim)
    dp = DPSGD(model, args.lr, args.clip, args.sigma, args.batch_size)
    steps = 0
    for epoch in range(args.epochs):
        for xb, yb in loader:
            dp.step(xb, yb)
            steps += 1
        acc = (dp.predict(x_te).argmax(1) == y_te).float().mean().item()
        eps = epsilon_estimate(steps, args.batch_size / len(x_tr), args.sigma, args.delta)
        print(f"epoch {epoch}  test acc {acc:.3f}  eps~{eps:.2f}")

    with torch.no_grad():
        for p, new in zip(model.parameters(), dp.params):
            p.copy_(new)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save({"model": model.state_dict(), "dim": args.dim, "sigma": args.sigma}, args.out)


if __name__ == "__main__":
    main()
