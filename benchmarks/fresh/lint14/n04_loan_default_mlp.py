import argparse
import csv
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NUMERIC = ["loan_amnt", "int_rate", "installment", "annual_inc", "dti", "revol_util", "open_acc", "total_acc"]
CATEGORICAL = ["grade", "home_ownership", "purpose"]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="data/lending/train.csv")
    parser.add_argument("--valid", default="data/lending/valid.csv")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/loan_default")
    return parser.parse_args()


def read_rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def build_encoders(rows):
    return {col: sorted({row[col] for row in rows}) for col in CATEGORICAL}


def encode(rows, encoders, stats=None):
    num = np.array([[float(row[c] or 0.0) for c in NUMERIC] for row in rows], dtype=np.float32)
    num = np.log1p(np.clip(num, 0.0, None))
    if stats is None:
        stats = (num.mean(axis=0), num.std(axis=0) + 1e-6)
    num = (num - stats[0]) / stats[1]
    onehots = []
    for col in CATEGORICAL:
        levels = encoders[col]
        block = np.zeros((len(rows), len(levels)), dtype=np.float32)
        for i, row in enumerate(rows):
            if row[col] in levels:
                block[i, levels.index(row[col])] = 1.0
        onehots.append(block)
    features = np.concatenate([num] + onehots, axis=1)
    labels = np.array([float(row["default"]) for row in rows], dtype=np.float32)
    return torch.from_numpy(features), torch.from_numpy(labels), stats


class RunningAUC:
    def __init__(self):
        self.scores, self.labels = [], []

    def update(self, scores, labels):
        self.scores.append(np.asarray(scores, dtype=np.float64).ravel())
        self.labels.append(np.asarray(labels, dtype=np.float64).ravel())

    def compute(self):
        scores, labels = np.concatenate(self.scores), np.concatenate(self.labels)
        order = np.argsort(scores, kind="mergesort")
        ranks = np.empty_like(order, dtype=np.float64)
        ranks[order] = np.arange(1, len(scores) + 1)
        pos = labels == 1
        n_pos, n_neg = pos.sum(), (~pos).sum()
        return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1))


def init_weights(module):
    if isinstance(module, nn.Linear):
        nn.init.xavier_normal(module.weight)
        nn.init.zeros_(module.bias)


def make_model(in_features, hidden):
    model = nn.Sequential(
        nn.Linear(in_features, hidden), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(hidden, hidden // 2), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(hidden // 2, 1),
    )
    model.apply(init_weights)
    return model


def train_epoch(model, loader, criterion, optimizer, device):
    model.train()
    meter, loss_sum, seen = RunningAUC(), 0.0, 0
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        logits = model(xb).squeeze(1)
        loss = criterion(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(torch.sigmoid(logits).numpy(), yb.numpy())
        loss_sum += loss.item() * yb.numel()
        seen += yb.numel()
    return loss_sum / seen, meter.compute()


def evaluate(model, loader, device):
    model.eval()
    meter = RunningAUC()
    with torch.no_grad():
        for xb, yb in loader:
            meter.update(torch.sigmoid(model(xb.to(device)).squeeze(1)).cpu().numpy(), yb.numpy())
    return meter.compute()


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    train_rows, valid_rows = read_rows(args.train), read_rows(args.valid)
    encoders = build_encoders(train_rows)
    x_tr, y_tr, stats = encode(train_rows, encoders)
    x_va, y_va, _ = encode(valid_rows, encoders, stats)
    train_loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True)
    valid_loader = DataLoader(TensorDataset(x_va, y_va), batch_size=4096)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = make_model(x_tr.shape[1], args.hidden).to(device)
    pos_weight = torch.tensor([(len(y_tr) - y_tr.sum().item()) / max(y_tr.sum().item(), 1.0)], device=device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    best = 0.0
    for epoch in range(args.epochs):
        loss, train_auc = train_epoch(model, train_loader, criterion, optimizer, device)
        valid_auc = evaluate(model, valid_loader, device)
        print(f"epoch {epoch:02d} loss {loss:.4f} train auc {train_auc:.4f} valid auc {valid_auc:.4f}")
        if valid_auc > best:
            best = valid_auc
            torch.save({"model": model.state_dict(), "mean": stats[0].tolist(), "std": stats[1].tolist()}, out / "best.pt")
    (out / "metrics.json").write_text(json.dumps({"best_valid_auc": best}))


if __name__ == "__main__":
    main()
