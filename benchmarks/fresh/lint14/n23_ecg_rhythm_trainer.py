import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

RHYTHMS = ["SR", "AFIB", "STACH", "SBRAD", "SARRH", "PACE"]


@dataclass
class TrainSettings:
    records: str = "data/ptbxl/rhythm_500hz.npz"
    epochs: int = 40
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 1e-4
    seed: int = 77
    out_dir: str = "runs/ecg_rhythm"


class ResBlock1d(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv1d(cin, cout, 15, stride=stride, padding=7, bias=False)
        self.bn1 = nn.BatchNorm1d(cout)
        self.conv2 = nn.Conv1d(cout, cout, 15, padding=7, bias=False)
        self.bn2 = nn.BatchNorm1d(cout)
        self.skip = nn.Sequential()
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv1d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm1d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.skip(x))


class RhythmNet(nn.Module):
    def __init__(self, leads=12, classes=len(RHYTHMS)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(leads, 64, 15, stride=2, padding=7, bias=False), nn.BatchNorm1d(64),
                                  nn.ReLU())
        self.blocks = nn.Sequential(ResBlock1d(64, 64, 1), ResBlock1d(64, 128, 2), ResBlock1d(128, 128, 1),
                                    ResBlock1d(128, 256, 2), ResBlock1d(256, 256, 1), ResBlock1d(256, 320, 2))
        self.head = nn.Linear(320, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=-1))


class RhythmTrainer:
    def __init__(self, model, optimizer, scheduler, criterion, device):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.criterion, self.device = criterion, device
        self.history = []

    def train_epoch(self, loader):
        self.model.train()
        loss_sum, n = 0.0, 0
        for signals, labels in loader:
            signals, labels = signals.to(self.device), labels.to(self.device)
            loss = self.criterion(self.model(signals), labels)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            loss_sum += loss.item() * labels.size(0)
            n += labels.size(0)
        return loss_sum / n

    def validate(self, loader):
        self.model.eval()
        loss_sum, n = 0.0, 0
        confusion = torch.zeros(len(RHYTHMS), len(RHYTHMS), dtype=torch.long)
        for signals, labels in loader:
            signals, labels = signals.to(self.device), labels.to(self.device)
            logits = self.model(signals)
            loss_sum += self.criterion(logits, labels).item() * labels.size(0)
            n += labels.size(0)
            pairs = labels * len(RHYTHMS) + logits.argmax(1)
            confusion += torch.bincount(pairs, minlength=len(RHYTHMS) ** 2).reshape(len(RHYTHMS), -1).cpu()
        recall = confusion.diag().float() / confusion.sum(1).clamp(min=1).float()
        return loss_sum / n, recall.mean().item(), confusion

    def fit(self, train_loader, valid_loader, epochs, out_dir):
        best = -1.0
        for epoch in range(epochs):
            train_loss = self.train_epoch(train_loader)
            valid_loss, bal_acc, confusion = self.validate(valid_loader)
            self.scheduler.step()
            self.history.append({"epoch": epoch, "train": train_loss, "valid": valid_loss, "bal_acc": bal_acc})
            print(f"epoch {epoch:02d} train {train_loss:.4f} valid {valid_loss:.4f} balanced acc {bal_acc:.4f}")
            if bal_acc > best:
                best = bal_acc
                torch.save({"model": self.model.state_dict(), "epoch": epoch, "confusion": confusion},
                           out_dir / "best.pt")
        return best


def load_split(path):
    data = np.load(path)
    x = torch.from_numpy(data["signals"].astype(np.float32))
    x = (x - x.mean(dim=-1, keepdim=True)) / (x.std(dim=-1, keepdim=True) + 1e-6)
    y = torch.from_numpy(data["labels"].astype(np.int64))
    folds = data["strat_fold"]
    train = torch.from_numpy(folds <= 8)
    return TensorDataset(x[train], y[train]), TensorDataset(x[~train], y[~train]), y[train]


def main(cfg=TrainSettings()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    train_set, valid_set, train_labels = load_split(cfg.records)
    counts = torch.bincount(train_labels, minlength=len(RHYTHMS)).float()
    weights = counts.sum() / (len(RHYTHMS) * counts.clamp(min=1))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = RhythmNet().to(device)
    groups = [{"params": [p for p in model.parameters() if p.ndim > 1], "weight_decay": cfg.weight_decay},
              {"params": [p for p in model.parameters() if p.ndim <= 1], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    trainer = RhythmTrainer(model, optimizer, scheduler, nn.CrossEntropyLoss(weight=weights.to(device)), device)
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    best = trainer.fit(DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True, drop_last=True),
                       DataLoader(valid_set, batch_size=256), cfg.epochs, out_dir)
    (out_dir / "history.json").write_text(json.dumps({"best_bal_acc": best, "history": trainer.history}, indent=2))


if __name__ == "__main__":
    main()
