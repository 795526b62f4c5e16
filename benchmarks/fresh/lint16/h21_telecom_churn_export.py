"""Telecom subscriber outcome model (stay / downgrade / churn), exported for the scoring service."""
import argparse
import copy
import csv
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FEATURES = ["tenure_months", "monthly_charge", "data_gb", "support_calls", "dropped_calls",
            "contract_months", "autopay", "family_plan", "roaming_min"]
OUTCOMES = ["stay", "downgrade", "churn"]


def read_rows(path):
    xs, ys = [], []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            xs.append([float(r[f]) for f in FEATURES])
            ys.append(OUTCOMES.index(r["outcome"]))
    return torch.tensor(xs), torch.tensor(ys, dtype=torch.long)


class ChurnNet(nn.Module):
    def __init__(self, mean, std, hidden=96):
        super().__init__()
        self.register_buffer("mean", mean.clone())
        self.register_buffer("std", std.clone())
        self.body = nn.Sequential(nn.Linear(len(FEATURES), hidden), nn.LayerNorm(hidden), nn.SiLU(),
                                  nn.Dropout(0.1), nn.Linear(hidden, hidden), nn.SiLU())
        self.out = nn.Linear(hidden, len(OUTCOMES))

    def forward(self, x):
        return self.out(self.body((x - self.mean) / self.std))


class ServingWrapper(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return F.softmax(self.net(x), dim=-1)


def run_epoch(model, loader, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, correct, n = 0.0, 0, 0
    with torch.set_grad_enabled(training):
        for xb, yb in loader:
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item() * yb.numel()
            correct += (logits.argmax(1) == yb).sum().item()
            n += yb.numel()
    return total / max(n, 1), correct / max(n, 1)


def export_program(model, path, n_features):
    wrapper = ServingWrapper(model).eval()
    example = torch.randn(4, n_features)
    batch = torch.export.Dim("batch", min=1, max=4096)
    program = torch.export.export(wrapper, (example,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, path)
    reloaded = torch.export.load(path).module()
    probe = torch.randn(7, n_features)
    with torch.no_grad():
        torch.testing.assert_close(reloaded(probe), wrapper(probe))
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/telco/train.csv")
    ap.add_argument("--valid", default="data/telco/valid.csv")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--out-dir", default="serving/churn")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    x_tr, y_tr = read_rows(args.train)
    x_va, y_va = read_rows(args.valid)
    mean, std = x_tr.mean(0), x_tr.std(0).clamp_min(1e-6)
    train_dl = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True)
    valid_dl = DataLoader(TensorDataset(x_va, y_va), batch_size=1024)

    model = ChurnNet(mean, std)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best_loss, best_state = float("inf"), None
    for epoch in range(args.epochs):
        tr_loss, _ = run_epoch(model, train_dl, optimizer)
        va_loss, va_acc = run_epoch(model, valid_dl)
        print(f"epoch {epoch:2d}  train {tr_loss:.4f}  valid {va_loss:.4f}  acc {va_acc:.3f}")
        if va_loss < best_loss:
            best_loss, best_state = va_loss, copy.deepcopy(model.state_dict())

    model.load_state_dict(best_state)
    os.makedirs(args.out_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.out_dir, "churn_net.pt"))
    path = export_program(model, os.path.join(args.out_dir, "churn_probs.pt2"), len(FEATURES))
    print(f"exported {path} (valid loss {best_loss:.4f})")


if __name__ == "__main__":
    main()
