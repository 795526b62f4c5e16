"""Sleep staging from two EEG derivations (Sleep-EDF, 30 s epochs at 100 Hz).

Each subject is one .npz with `x` (n_epochs, 2, 3000) float32 and `y` (n_epochs,) in 0..4
(W, N1, N2, N3, REM), as written by the preprocessing notebook. Subjects are split, not epochs.
"""
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

STAGES = ["W", "N1", "N2", "N3", "REM"]


@dataclass
class Config:
    root: Path = Path("data/sleep_edf_npz")
    valid_subjects: list = field(default_factory=lambda: ["SC4001", "SC4011", "SC4021", "SC4031"])
    batch_size: int = 128
    num_workers: int = 0
    epochs: int = 30
    lr: float = 1e-3
    seed: int = 7


def load_subjects(root, names):
    xs, ys = [], []
    for name in names:
        with np.load(root / f"{name}.npz") as f:
            xs.append(f["x"].astype(np.float32))
            ys.append(f["y"].astype(np.int64))
    return np.concatenate(xs), np.concatenate(ys)


class EEGEpochs(Dataset):
    def __init__(self, signals, stages, mean, std):
        self.signals = signals
        self.stages = torch.from_numpy(stages)
        self.mean, self.std = mean, std

    def __len__(self):
        return len(self.stages)

    def __getitem__(self, i):
        x = torch.from_numpy(self.signals[i])
        x -= self.mean
        x /= self.std
        return x, self.stages[i]


class SleepCNN(nn.Module):
    def __init__(self, in_ch=2, n_classes=5):
        super().__init__()

        def block(cin, cout, k, pool):
            return nn.Sequential(nn.Conv1d(cin, cout, k, padding=k // 2, bias=False),
                                 nn.BatchNorm1d(cout), nn.ReLU(inplace=True), nn.MaxPool1d(pool))

        self.features = nn.Sequential(block(in_ch, 32, 50, 4), block(32, 64, 8, 4),
                                      block(64, 128, 8, 4), block(128, 128, 8, 2))
        self.dropout = nn.Dropout(0.5)
        self.head = nn.Linear(128, n_classes)

    def forward(self, x):
        h = self.features(x).mean(dim=-1)
        return self.head(self.dropout(h))


def class_weights(stages, n_classes=5):
    counts = np.bincount(stages, minlength=n_classes).astype(np.float32)
    w = counts.sum() / (n_classes * np.maximum(counts, 1.0))
    return torch.tensor(w, dtype=torch.float32)


def macro_f1(pred, true, n_classes=5):
    cm = torch.bincount(true * n_classes + pred, minlength=n_classes ** 2).reshape(n_classes, n_classes)
    tp = cm.diag().float()
    precision = tp / cm.sum(0).clamp(min=1)
    recall = tp / cm.sum(1).clamp(min=1)
    f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
    return f1.mean().item(), f1.tolist()


def run_epoch(model, loader, device, optimizer=None, criterion=None):
    training = optimizer is not None
    model.train(training)
    preds, trues, total, n = [], [], 0.0, 0
    with torch.set_grad_enabled(training):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = criterion(logits, y)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item() * y.numel()
            n += y.numel()
            preds.append(logits.argmax(1).cpu())
            trues.append(y.cpu())
    return total / n, torch.cat(preds), torch.cat(trues)


def main(cfg=Config()):
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    subjects = sorted(p.stem for p in cfg.root.glob("SC4*.npz"))
    train_subjects = [s for s in subjects if s not in cfg.valid_subjects]

    x_tr, y_tr = load_subjects(cfg.root, train_subjects)
    x_va, y_va = load_subjects(cfg.root, cfg.valid_subjects)
    mean = torch.from_numpy(x_tr.mean(axis=(0, 2))).reshape(-1, 1)
    std = torch.from_numpy(x_tr.std(axis=(0, 2))).reshape(-1, 1)

    train_dl = DataLoader(EEGEpochs(x_tr, y_tr, mean, std), batch_size=cfg.batch_size,
                          shuffle=True, drop_last=True, num_workers=cfg.num_workers)
    valid_dl = DataLoader(EEGEpochs(x_va, y_va, mean, std), batch_size=512,
                          num_workers=cfg.num_workers)

    model = SleepCNN().to(device)
    criterion = nn.CrossEntropyLoss(weight=class_weights(y_tr).to(device))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)

    best = -1.0
    for epoch in range(cfg.epochs):
        tr_loss, _, _ = run_epoch(model, train_dl, device, optimizer, criterion)
        va_loss, pred, true = run_epoch(model, valid_dl, device, criterion=criterion)
        scheduler.step()
        f1, per_class = macro_f1(pred, true)
        print(f"{epoch:3d} train {tr_loss:.3f} valid {va_loss:.3f} macro-F1 {f1:.3f} "
              + " ".join(f"{s}={v:.2f}" for s, v in zip(STAGES, per_class)))
        if f1 > best:
            best = f1
            torch.save(model.state_dict(), "sleep_cnn_best.pt")


if __name__ == "__main__":
    main()
