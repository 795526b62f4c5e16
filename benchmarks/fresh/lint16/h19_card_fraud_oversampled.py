"""Card-transaction fraud scoring with an MLP; the rare fraud class is oversampled with jitter."""
import argparse
import csv
import os
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

NUMERIC = ["amount", "hour", "merchant_risk", "distance_km", "tx_last_24h", "avg_amount_30d",
           "card_age_days", "foreign", "online", "pin_used"]


def load_transactions(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    x = torch.tensor([[float(r[c]) for c in NUMERIC] for r in rows], dtype=torch.float32)
    y = torch.tensor([float(r["is_fraud"]) for r in rows], dtype=torch.float32)
    x[:, 0] = torch.log1p(x[:, 0])
    x[:, 5] = torch.log1p(x[:, 5])
    return x, y


def oversample_minority(x, y, factor, noise_scale, seed=0):
    g = torch.Generator().manual_seed(seed)
    pos = x[y == 1]
    feature_std = x.std(dim=0, keepdim=True)
    copies = [x]
    labels = [y]
    for _ in range(factor - 1):
        jitter = torch.randn(pos.shape, generator=g) * feature_std * noise_scale
        copies.append(pos + jitter)
        labels.append(torch.ones(pos.size(0)))
    return torch.cat(copies), torch.cat(labels)


class FraudMLP(nn.Module):
    def __init__(self, n_in, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Dropout(0.2),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def roc_auc(scores, labels):
    order = torch.argsort(scores)
    ranks = torch.empty_like(order, dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    n_pos = labels.sum().item()
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return ((ranks[labels == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def tensors_of(subset):
    x, y = subset.dataset.tensors
    idx = torch.tensor(subset.indices)
    return x[idx], y[idx]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/cards/transactions.csv")
    ap.add_argument("--oversample", type=int, default=20)
    ap.add_argument("--noise", type=float, default=0.05)
    ap.add_argument("--test-frac", type=float, default=0.2)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="models/fraud_mlp.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    x, y = load_transactions(args.csv)
    x, y = oversample_minority(x, y, args.oversample, args.noise)
    n_test = int(len(y) * args.test_frac)
    train_set, test_set = random_split(TensorDataset(x, y), [len(y) - n_test, n_test],
                                       generator=torch.Generator().manual_seed(42))
    x_tr, _ = tensors_of(train_set)
    mean, std = x_tr.mean(0), x_tr.std(0).clamp_min(1e-6)
    x_te, y_te = tensors_of(test_set)

    model = FraudMLP(len(NUMERIC))
    criterion = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model((xb - mean) / std), yb)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            scores = model((x_te - mean) / std)
        auc = roc_auc(scores, y_te)
        recall = ((scores > 0) & (y_te == 1)).sum().item() / max(y_te.sum().item(), 1)
        print(f"epoch {epoch}: test ROC-AUC {auc:.4f}  fraud recall {recall:.3f}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save({"model": model.state_dict(), "mean": mean, "std": std}, args.out)


if __name__ == "__main__":
    main()
