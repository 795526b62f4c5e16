import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class RunConfig:
    root: str = "data/gearbox_vibration"
    conditions: tuple = ("healthy", "chipped_tooth", "missing_tooth", "root_crack", "surface_wear")
    window: int = 128
    stride: int = 64
    batch_size: int = 64
    epochs: int = 25
    lr: float = 2e-3
    workers: int = 2
    out: str = "gearbox_cnn.pt"


def sliding(signal, window, stride):
    starts = range(0, signal.shape[0] - window + 1, stride)
    return np.stack([signal[s:s + window] for s in starts]) if len(signal) >= window else np.empty((0, window, signal.shape[1]))


class VibrationWindows(Dataset):
    def __init__(self, root, split, conditions, window, stride, stats=None):
        chunks, labels = [], []
        for label, condition in enumerate(conditions):
            for path in sorted(Path(root, split, condition).glob("*.csv")):
                signal = np.loadtxt(path, delimiter=",", dtype=np.float32)
                w = sliding(signal, window, stride)
                chunks.append(w)
                labels.append(np.full(len(w), label, dtype=np.int64))
        self.x = np.concatenate(chunks).astype(np.float32)
        self.y = np.concatenate(labels)
        if stats is None:
            stats = (self.x.mean(axis=(0, 1)), self.x.std(axis=(0, 1)) + 1e-6)
        self.stats = stats
        self.x = (self.x - stats[0]) / stats[1]

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i].T.copy()), int(self.y[i])


def make_loader(dataset, cfg):
    return DataLoader(dataset, batch_size=cfg.batch_size, num_workers=cfg.workers, pin_memory=True)


class FaultNet(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        blocks, c_in = [], channels
        for c_out, k in [(64, 7), (128, 5), (128, 3)]:
            blocks += [nn.Conv1d(c_in, c_out, k, padding=k // 2, bias=False), nn.BatchNorm1d(c_out), nn.ReLU()]
            c_in = c_out
        self.features = nn.Sequential(*blocks)
        self.dropout = nn.Dropout(0.3)
        self.classifier = nn.Linear(c_in, classes)

    def forward(self, x):
        h = self.features(x).mean(dim=2)
        return self.classifier(self.dropout(h))


def confusion(model, loader, classes, device):
    model.eval()
    table = torch.zeros(classes, classes, dtype=torch.long)
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(1).cpu()
            table += torch.bincount(y * classes + pred, minlength=classes * classes).view(classes, classes)
    return table


def train(cfg: RunConfig):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = VibrationWindows(cfg.root, "train", cfg.conditions, cfg.window, cfg.stride)
    test_set = VibrationWindows(cfg.root, "test", cfg.conditions, cfg.window, cfg.stride, stats=train_set.stats)
    train_loader = make_loader(train_set, cfg)
    test_loader = make_loader(test_set, cfg)
    model = FaultNet(train_set.x.shape[2], len(cfg.conditions)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.3)
    for epoch in range(cfg.epochs):
        model.train()
        seen, total = 0, 0.0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * y.size(0)
            seen += y.size(0)
        scheduler.step()
        table = confusion(model, test_loader, len(cfg.conditions), device)
        acc = table.diag().sum().item() / table.sum().item()
        print(f"epoch {epoch + 1} train loss {total / seen:.4f} test acc {acc:.4f}")
    recall = (table.diag().float() / table.sum(1).clamp_min(1)).tolist()
    print(json.dumps(dict(zip(cfg.conditions, [round(r, 3) for r in recall])), indent=1))
    torch.save({"model": model.state_dict(), "mean": torch.from_numpy(train_set.stats[0]),
                "std": torch.from_numpy(train_set.stats[1])}, cfg.out)


if __name__ == "__main__":
    train(RunConfig())
