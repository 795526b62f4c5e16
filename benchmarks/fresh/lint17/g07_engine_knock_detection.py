"""Knock detection from cylinder-block accelerometer windows (one window per combustion cycle).

The effective batch of 256 windows does not fit next to the long 1-D CNN on the test-bench GPU,
so each optimizer step is made from several smaller micro-batches.
"""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def load_split(root, split):
    data = np.load(Path(root) / f"{split}.npz")
    x = torch.from_numpy(data["accel"].astype(np.float32))
    y = torch.from_numpy(data["knock"].astype(np.int64))
    return x, y


class KnockNet(nn.Module):
    def __init__(self, channels=(16, 32, 64, 64), n_classes=2):
        super().__init__()
        blocks, c_in = [], 1
        for c in channels:
            blocks += [nn.Conv1d(c_in, c, 9, padding=4, bias=False), nn.BatchNorm1d(c), nn.GELU(), nn.MaxPool1d(4)]
            c_in = c
        self.features = nn.Sequential(*blocks)
        self.classifier = nn.Linear(c_in, n_classes)

    def forward(self, x):
        return self.classifier(self.features(x.unsqueeze(1)).mean(dim=-1))


def per_window_standardize(x):
    return (x - x.mean(dim=-1, keepdim=True)) / (x.std(dim=-1, keepdim=True) + 1e-5)


def train_one_epoch(model, loader, optimizer, class_weight, accum_steps, device):
    model.train()
    optimizer.zero_grad()
    seen, total = 0, 0.0
    for i, (x, y) in enumerate(loader):
        x, y = per_window_standardize(x.to(device)), y.to(device)
        loss = F.cross_entropy(model(x), y, weight=class_weight)
        loss.backward()
        if (i + 1) % accum_steps == 0 or (i + 1) == len(loader):
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            optimizer.zero_grad()
        total += loss.item() * len(y)
        seen += len(y)
    return total / seen


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    tp = fp = fn = correct = n = 0
    for x, y in loader:
        pred = model(per_window_standardize(x.to(device))).argmax(dim=1).cpu()
        tp += int(((pred == 1) & (y == 1)).sum())
        fp += int(((pred == 1) & (y == 0)).sum())
        fn += int(((pred == 0) & (y == 1)).sum())
        correct += int((pred == y).sum())
        n += len(y)
    recall = tp / max(tp + fn, 1)
    precision = tp / max(tp + fp, 1)
    return correct / n, precision, recall


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/knock_bench")
    ap.add_argument("--micro-batch", type=int, default=64)
    ap.add_argument("--accum-steps", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--ckpt", default="knocknet.pt")
    args = ap.parse_args(argv)

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x_tr, y_tr = load_split(args.root, "train")
    x_va, y_va = load_split(args.root, "valid")
    counts = torch.bincount(y_tr, minlength=2).float()
    class_weight = (counts.sum() / (2 * counts.clamp(min=1))).to(device)

    train_dl = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.micro_batch, shuffle=True, drop_last=True)
    valid_dl = DataLoader(TensorDataset(x_va, y_va), batch_size=512)
    model = KnockNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    best_recall = 0.0
    for epoch in range(args.epochs):
        loss = train_one_epoch(model, train_dl, optimizer, class_weight, args.accum_steps, device)
        scheduler.step()
        acc, precision, recall = evaluate(model, valid_dl, device)
        print(f"{epoch:02d} loss {loss:.4f} acc {acc:.3f} precision {precision:.3f} recall {recall:.3f}")
        if recall > best_recall and precision > 0.8:
            best_recall = recall
            torch.save(model.state_dict(), args.ckpt)


if __name__ == "__main__":
    main()
