import argparse
import csv

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

STATES = ("normal", "suspect", "pathological")


def read_ctg(path):
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = [[float(v) for v in row] for row in reader]
    table = np.asarray(rows, dtype=np.float32)
    nsp = header.index("NSP")
    features = np.delete(table, nsp, axis=1)
    labels = table[:, nsp].astype(np.int64) - 1
    return features, labels


def stratified_split(labels, frac, seed):
    rng = np.random.default_rng(seed)
    val_idx = []
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        val_idx.extend(rng.choice(idx, size=max(1, int(frac * len(idx))), replace=False))
    mask = np.zeros(len(labels), dtype=bool)
    mask[val_idx] = True
    return np.flatnonzero(~mask), np.flatnonzero(mask)


class CTGNet(nn.Module):
    def __init__(self, n_in, n_out=len(STATES)):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 32), nn.ReLU())
        self.logits = nn.Linear(32, n_out)

    def forward(self, x):
        return self.logits(self.body(x))


def class_scores(model, x):
    return F.softmax(model(x), dim=1)


def macro_f1(pred, true, n):
    scores = []
    for c in range(n):
        tp = ((pred == c) & (true == c)).sum().item()
        fp = ((pred == c) & (true != c)).sum().item()
        fn = ((pred != c) & (true == c)).sum().item()
        scores.append(2 * tp / max(2 * tp + fp + fn, 1))
    return sum(scores) / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", default="ctg.csv")
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()
    features, labels = read_ctg(args.csv)
    train_idx, val_idx = stratified_split(labels, 0.2, seed=7)
    mean, std = features[train_idx].mean(0), features[train_idx].std(0) + 1e-6
    x = torch.from_numpy((features - mean) / std)
    y = torch.from_numpy(labels)
    counts = np.bincount(labels[train_idx], minlength=len(STATES))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    weights = torch.tensor(counts.sum() / (len(STATES) * counts), dtype=torch.float32, device=device)
    criterion = nn.NLLLoss(weight=weights)
    loader = DataLoader(TensorDataset(x[train_idx], y[train_idx]), batch_size=64, shuffle=True)
    model = CTGNet(x.shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = criterion(class_scores(model, xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % 10 == 9:
            model.eval()
            with torch.no_grad():
                pred = class_scores(model, x[val_idx].to(device)).argmax(dim=1).cpu()
            print(f"epoch {epoch + 1}: macro F1 {macro_f1(pred, y[val_idx], len(STATES)):.3f}")
    torch.save({"model": model.state_dict(), "mean": mean.tolist(), "std": std.tolist()}, "ctg_net.pt")


if __name__ == "__main__":
    main()
