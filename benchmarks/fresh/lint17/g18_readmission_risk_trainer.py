"""30-day readmission risk from discharge records (tabular: labs, vitals, diagnosis groups).

A small trainer with callbacks: validation AUROC, early stopping and checkpointing are
callbacks run at the end of every epoch.
"""
import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def auroc(scores, labels):
    order = np.argsort(-scores)
    labels = labels[order]
    tps = np.cumsum(labels)
    fps = np.cumsum(1 - labels)
    tpr = tps / max(tps[-1], 1)
    fpr = fps / max(fps[-1], 1)
    return float(np.trapezoid(tpr, fpr)) if hasattr(np, "trapezoid") else float(np.trapz(tpr, fpr))


class RiskMLP(nn.Module):
    def __init__(self, n_features, n_groups, hidden=128):
        super().__init__()
        self.group_embed = nn.Embedding(n_groups, 16)
        self.net = nn.Sequential(
            nn.Linear(n_features + 16, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(hidden, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(hidden, 1),
        )

    def forward(self, x, group):
        return self.net(torch.cat([x, self.group_embed(group)], dim=1)).squeeze(1)


class Trainer:
    def __init__(self, model, optimizer, device, callbacks=()):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.callbacks = list(callbacks)
        self.epoch = 0
        self.stop = False
        self.logs = {}

    def fit(self, train_loader, epochs, pos_weight):
        self.model.train()
        for self.epoch in range(epochs):
            total, n = 0.0, 0
            for x, group, y in train_loader:
                x, group, y = x.to(self.device), group.to(self.device), y.to(self.device)
                loss = F.binary_cross_entropy_with_logits(self.model(x, group), y, pos_weight=pos_weight)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total += loss.item() * len(y)
                n += len(y)
            self.logs = {"train_loss": total / n}
            for cb in self.callbacks:
                cb.on_epoch_end(self)
            if self.stop:
                break


class Validation:
    def __init__(self, loader):
        self.loader = loader

    def on_epoch_end(self, trainer):
        trainer.model.eval()
        scores, labels = [], []
        with torch.no_grad():
            for x, group, y in self.loader:
                scores.append(torch.sigmoid(trainer.model(x.to(trainer.device), group.to(trainer.device))).cpu())
                labels.append(y)
        trainer.logs["val_auroc"] = auroc(torch.cat(scores).numpy(), torch.cat(labels).numpy())


class EarlyStopping:
    def __init__(self, path, patience=5):
        self.path, self.patience = path, patience
        self.best, self.bad_epochs = -1.0, 0

    def on_epoch_end(self, trainer):
        score = trainer.logs["val_auroc"]
        print(f"epoch {trainer.epoch}: " + json.dumps(trainer.logs))
        if score > self.best:
            self.best, self.bad_epochs = score, 0
            torch.save(trainer.model.state_dict(), self.path)
        else:
            self.bad_epochs += 1
            trainer.stop = self.bad_epochs >= self.patience


def load_split(path, mean=None, std=None):
    d = np.load(path)
    x = d["features"].astype(np.float32)
    if mean is None:
        mean, std = x.mean(0), x.std(0) + 1e-6
    x = (x - mean) / std
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(d["dx_group"].astype(np.int64)),
                         torch.from_numpy(d["readmitted"].astype(np.float32))), mean, std


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/readmit_train.npz")
    ap.add_argument("--valid", default="data/readmit_valid.npz")
    ap.add_argument("--groups", type=int, default=300)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--ckpt", default="runs/readmit/best.pt")
    args = ap.parse_args(argv)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set, mean, std = load_split(args.train)
    valid_set, _, _ = load_split(args.valid, mean, std)
    train_dl = DataLoader(train_set, batch_size=256, shuffle=True, drop_last=True)
    valid_dl = DataLoader(valid_set, batch_size=1024)
    y = train_set.tensors[2]
    pos_weight = ((len(y) - y.sum()) / y.sum().clamp(min=1.0)).to(device)
    model = RiskMLP(train_set.tensors[0].shape[1], args.groups).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    Path(args.ckpt).parent.mkdir(parents=True, exist_ok=True)
    trainer = Trainer(model, optimizer, device, [Validation(valid_dl), EarlyStopping(args.ckpt)])
    trainer.fit(train_dl, args.epochs, pos_weight)


if __name__ == "__main__":
    main()
