"""Heartbeat classification on MIT-BIH (AAMI classes N, S, V, F, Q) with a small 1-D CNN.

The beats were segmented beforehand (187 samples around each R peak) and stored in one .npz.
"""
import os
from dataclasses import dataclass, asdict

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import classification_report, f1_score
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset

AAMI = ["N", "S", "V", "F", "Q"]


@dataclass
class Config:
    data_path: str = "data/mitbih_beats.npz"
    target_per_class: int = 8000
    test_size: float = 0.2
    batch_size: int = 256
    epochs: int = 30
    lr: float = 1e-3
    dropout: float = 0.3
    seed: int = 42
    out_dir: str = "checkpoints/ecg"


def load_beats(path):
    data = np.load(path)
    beats = data["beats"].astype(np.float32)
    labels = data["labels"].astype(np.int64)
    beats = (beats - beats.mean(axis=1, keepdims=True)) / (beats.std(axis=1, keepdims=True) + 1e-6)
    return beats, labels


def jitter(beat, rng):
    """A plausible variant of one beat: amplitude scaling, a small time shift, sensor noise."""
    scale = rng.uniform(0.9, 1.1)
    shift = int(rng.integers(-5, 6))
    noise = rng.normal(0.0, 0.02, size=beat.shape)
    return (np.roll(beat, shift) * scale + noise).astype(np.float32)


def rebalance(beats, labels, per_class, rng):
    """Oversample the rare arrhythmia classes with jittered copies up to `per_class` beats."""
    xs, ys = [beats], [labels]
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        need = per_class - len(idx)
        if need <= 0:
            continue
        picks = rng.choice(idx, size=need, replace=True)
        xs.append(np.stack([jitter(beats[i], rng) for i in picks]))
        ys.append(np.full(need, c, dtype=np.int64))
    return np.concatenate(xs), np.concatenate(ys)


def conv_block(c_in, c_out, k):
    return nn.Sequential(
        nn.Conv1d(c_in, c_out, k, padding=k // 2, bias=False),
        nn.BatchNorm1d(c_out),
        nn.ReLU(inplace=True),
        nn.MaxPool1d(2),
    )


class BeatNet(nn.Module):
    def __init__(self, n_classes, dropout):
        super().__init__()
        self.features = nn.Sequential(
            conv_block(1, 32, 7), conv_block(32, 64, 5), conv_block(64, 128, 3),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(dropout),
            nn.Linear(128, n_classes),
            nn.Softmax(dim=1),
        )

    def forward(self, x):
        return self.classifier(self.features(x.unsqueeze(1)))


def make_loader(x, y, batch_size, train):
    ds = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    return DataLoader(ds, batch_size=batch_size, shuffle=train, drop_last=train)


@torch.no_grad()
def predict(model, loader, device):
    model.eval()
    preds, targets = [], []
    for xb, yb in loader:
        probs = model(xb.to(device))
        preds.append(probs.argmax(dim=1).cpu())
        targets.append(yb)
    return torch.cat(preds).numpy(), torch.cat(targets).numpy()


def main(cfg: Config):
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    os.makedirs(cfg.out_dir, exist_ok=True)

    beats, labels = load_beats(cfg.data_path)
    print("raw class counts:", np.bincount(labels, minlength=len(AAMI)))
    beats, labels = rebalance(beats, labels, cfg.target_per_class, rng)
    x_tr, x_te, y_tr, y_te = train_test_split(
        beats, labels, test_size=cfg.test_size, stratify=labels, random_state=cfg.seed)
    train_dl = make_loader(x_tr, y_tr, cfg.batch_size, train=True)
    test_dl = make_loader(x_te, y_te, cfg.batch_size, train=False)

    model = BeatNet(len(AAMI), cfg.dropout).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=3)

    best_f1 = 0.0
    for epoch in range(cfg.epochs):
        model.train()
        running, n = 0.0, 0
        for xb, yb in train_dl:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.item() * yb.size(0)
            n += yb.size(0)
        pred, true = predict(model, test_dl, device)
        macro_f1 = f1_score(true, pred, average="macro")
        scheduler.step(macro_f1)
        print(f"epoch {epoch + 1:02d} loss {running / n:.4f} macro-F1 {macro_f1:.4f}")
        if macro_f1 > best_f1:
            best_f1 = macro_f1
            torch.save({"model": model.state_dict(), "config": asdict(cfg)},
                       os.path.join(cfg.out_dir, "beatnet.pt"))

    print(classification_report(true, pred, target_names=AAMI, digits=3))


if __name__ == "__main__":
    main(Config())
