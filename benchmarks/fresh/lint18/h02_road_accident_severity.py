import argparse
import csv
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

SEVERITY = {"slight": 0, "serious": 1, "fatal": 2}
NUMERIC = ["speed_limit", "vehicles", "casualties", "hour", "light", "surface_wet", "urban"]
ROAD_TYPES = ["single", "dual", "roundabout", "one_way", "slip"]


def read_table(path):
    rows = []
    with open(path, newline="") as f:
        for rec in csv.DictReader(f):
            onehot = [float(rec["road_type"] == r) for r in ROAD_TYPES]
            rows.append([float(rec[c]) for c in NUMERIC] + onehot + [SEVERITY[rec["severity"]]])
    return np.array(rows, dtype=np.float32)


def to_dataset(table, mean, std):
    features = (table[:, :-1] - mean) / std
    return TensorDataset(torch.from_numpy(features), torch.from_numpy(table[:, -1]))


class History:
    def __init__(self):
        self.rows = defaultdict(list)

    def log(self, **values):
        for key, value in values.items():
            self.rows[key].append(value)

    def mean(self, key):
        values = self.rows.pop(key)
        return float(sum(values) / len(values))


def severity_mlp(n_in, hidden, n_classes):
    return nn.Sequential(
        nn.Linear(n_in, hidden), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(hidden, n_classes),
    )


def evaluate(model, loader, criterion):
    model.eval()
    loss_sum, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss_sum += criterion(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            n += len(y)
    return loss_sum / n, correct / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/accidents_train.csv")
    p.add_argument("--val", default="data/accidents_val.csv")
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args()
    torch.manual_seed(0)

    train_table, val_table = read_table(args.train), read_table(args.val)
    mean = train_table[:, :-1].mean(axis=0)
    std = train_table[:, :-1].std(axis=0) + 1e-6
    train_set, val_set = to_dataset(train_table, mean, std), to_dataset(val_table, mean, std)
    counts = np.bincount(train_table[:, -1].astype(np.int64), minlength=len(SEVERITY))
    weights = torch.tensor(counts.sum() / (len(SEVERITY) * counts), dtype=torch.float32)

    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=1024)
    model = severity_mlp(train_table.shape[1] - 1, args.hidden, len(SEVERITY))
    criterion = nn.CrossEntropyLoss(weight=weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    history = History()

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            history.log(loss=loss)
        val_loss, val_acc = evaluate(model, val_loader, criterion)
        print(f"epoch {epoch}: train {history.mean('loss'):.4f} val {val_loss:.4f} acc {val_acc:.3f}")
    torch.save(model.state_dict(), "severity_mlp.pt")


if __name__ == "__main__":
    main()
