"""Bird species from 5-second song clips (precomputed log-mel spectrograms).

Each clip is stored as a float16 .npy array of shape (n_mels, frames); metadata.csv lists
`path,species,fold`. Training uses a soft-target cross-entropy with label smoothing and a
temperature, as in the team's earlier BirdCLEF baseline.
"""
import csv
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    root: str = "data/birdsong"
    val_fold: int = 4
    n_mels: int = 128
    frames: int = 313
    batch_size: int = 48
    epochs: int = 30
    lr: float = 3e-4
    smoothing: float = 0.05
    temperature: float = 1.0
    seed: int = 11
    out: str = "checkpoints/birdsong.pt"
    channels: list = field(default_factory=lambda: [32, 64, 128, 256])


class SongClips(Dataset):
    def __init__(self, rows, root, frames, train):
        self.rows, self.root, self.frames, self.train = rows, Path(root), frames, train

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        path, label = self.rows[idx]
        spec = np.load(self.root / path).astype(np.float32)
        if spec.shape[1] > self.frames:
            start = random.randint(0, spec.shape[1] - self.frames) if self.train else 0
            spec = spec[:, start : start + self.frames]
        elif spec.shape[1] < self.frames:
            spec = np.pad(spec, ((0, 0), (0, self.frames - spec.shape[1])), mode="constant", constant_values=spec.min())
        spec = (spec - spec.mean()) / (spec.std() + 1e-5)
        return torch.from_numpy(spec).unsqueeze(0), label


class SmoothedSoftTargetLoss(nn.Module):
    def __init__(self, n_classes, smoothing, temperature):
        super().__init__()
        self.n_classes, self.smoothing, self.temperature = n_classes, smoothing, temperature

    def forward(self, logits, target):
        p = F.softmax(logits / self.temperature, dim=1)
        with torch.no_grad():
            q = torch.full_like(p, self.smoothing / (self.n_classes - 1))
            q.scatter_(1, target.unsqueeze(1), 1.0 - self.smoothing)
        return -(q * p.log()).sum(dim=1).mean()


def conv_block(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
    )


class SongCNN(nn.Module):
    def __init__(self, n_classes, channels):
        super().__init__()
        chans = [1] + list(channels)
        self.blocks = nn.Sequential(*[conv_block(a, b) for a, b in zip(chans[:-1], chans[1:])])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Dropout(0.3), nn.Linear(chans[-1], n_classes))

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(x)), 1))


class Trainer:
    def __init__(self, cfg, model, criterion, device):
        self.cfg, self.model, self.criterion, self.device = cfg, model.to(device), criterion, device
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=cfg.epochs)
        self.best = 0.0

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        for spec, label in loader:
            spec, label = spec.to(self.device), label.to(self.device)
            loss = self.criterion(self.model(spec), label)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item() * label.size(0)
            n += label.size(0)
        self.scheduler.step()
        return total / n

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        correct, n = 0, 0
        for spec, label in loader:
            pred = self.model(spec.to(self.device)).argmax(dim=1).cpu()
            correct += (pred == label).sum().item()
            n += label.size(0)
        return correct / n

    def fit(self, train_loader, val_loader):
        for epoch in range(self.cfg.epochs):
            loss = self.train_epoch(train_loader)
            acc = self.validate(val_loader)
            print(f"epoch {epoch:02d} loss {loss:.4f} val_acc {acc:.4f}")
            if acc > self.best:
                self.best = acc
                Path(self.cfg.out).parent.mkdir(parents=True, exist_ok=True)
                torch.save(self.model.state_dict(), self.cfg.out)


def main(cfg=Config()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    with open(Path(cfg.root) / "metadata.csv") as f:
        meta = list(csv.DictReader(f))
    species = sorted({m["species"] for m in meta})
    index = {s: i for i, s in enumerate(species)}
    train_rows = [(m["path"], index[m["species"]]) for m in meta if int(m["fold"]) != cfg.val_fold]
    val_rows = [(m["path"], index[m["species"]]) for m in meta if int(m["fold"]) == cfg.val_fold]

    train_loader = DataLoader(SongClips(train_rows, cfg.root, cfg.frames, True), batch_size=cfg.batch_size,
                              shuffle=True, num_workers=4, drop_last=True)
    val_loader = DataLoader(SongClips(val_rows, cfg.root, cfg.frames, False), batch_size=96, num_workers=4)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SongCNN(len(species), cfg.channels)
    criterion = SmoothedSoftTargetLoss(len(species), cfg.smoothing, cfg.temperature)
    Trainer(cfg, model, criterion, device).fit(train_loader, val_loader)


if __name__ == "__main__":
    main()
