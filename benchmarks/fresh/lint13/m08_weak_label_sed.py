"""Weakly-labelled sound event detection (DCASE task 4 style) with a CRNN.

Clips come with clip-level tags only; the model predicts frame-level probabilities and pools
them to the clip with linear-softmax pooling (Wang et al., 2019). Log-mel features (64 bands,
10 ms hop) are precomputed per clip; clips shorter than 10 s are padded and their frames masked.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

EVENTS = ["Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog", "Electric_shaver_toothbrush",
          "Frying", "Running_water", "Speech", "Vacuum_cleaner"]


@dataclass
class Config:
    feature_dir: Path = Path("features/dcase_logmel")
    train_meta: Path = Path("meta/weak_train.json")
    val_meta: Path = Path("meta/weak_val.json")
    max_frames: int = 1000
    n_mels: int = 64
    batch_size: int = 24
    lr: float = 1e-3
    epochs: int = 60
    clip_grad: float = 5.0
    stats: dict = field(default_factory=lambda: {"mean": -6.2, "std": 3.1})


class WeakClips(Dataset):
    def __init__(self, cfg, meta_path):
        self.cfg = cfg
        self.items = json.loads(Path(meta_path).read_text())

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        item = self.items[i]
        mel = np.load(self.cfg.feature_dir / f"{item['id']}.npy")[: self.cfg.max_frames]
        mel = (mel - self.cfg.stats["mean"]) / self.cfg.stats["std"]
        n = mel.shape[0]
        x = np.zeros((self.cfg.max_frames, self.cfg.n_mels), dtype=np.float32)
        x[:n] = mel
        valid = np.zeros(self.cfg.max_frames, dtype=np.float32)
        valid[:n] = 1.0
        target = np.zeros(len(EVENTS), dtype=np.float32)
        target[[EVENTS.index(e) for e in item["events"]]] = 1.0
        return torch.from_numpy(x).unsqueeze(0), torch.from_numpy(valid), torch.from_numpy(target)


class CRNN(nn.Module):
    def __init__(self, n_mels, n_classes, channels=(32, 64, 128)):
        super().__init__()
        layers, cin = [], 1
        for c in channels:
            layers += [nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.GELU(),
                       nn.MaxPool2d((1, 4))]
            cin = c
        self.cnn = nn.Sequential(*layers)
        freq = n_mels // 4 ** len(channels)
        self.rnn = nn.GRU(cin * freq, 256, batch_first=True)
        self.frame_head = nn.Linear(256, n_classes)

    def frame_probs(self, x, valid):
        h = self.cnn(x)
        b, c, t, f = h.shape
        h, _ = self.rnn(h.permute(0, 2, 1, 3).reshape(b, t, c * f))
        probs = torch.sigmoid(self.frame_head(h))
        probs *= valid.unsqueeze(-1)
        return probs

    def forward(self, x, valid):
        probs = self.frame_probs(x, valid)
        clip = (probs * probs).sum(1) / probs.sum(1).clamp_min(1e-7)
        return clip.clamp(1e-7, 1 - 1e-7), probs


def f1_at(clip_probs, targets, threshold=0.5):
    pred = (clip_probs > threshold).float()
    tp = (pred * targets).sum(0)
    fp = (pred * (1 - targets)).sum(0)
    fn = ((1 - pred) * targets).sum(0)
    return (2 * tp / (2 * tp + fp + fn).clamp_min(1)).mean().item()


def run(cfg: Config):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = DataLoader(WeakClips(cfg, cfg.train_meta), batch_size=cfg.batch_size, shuffle=True,
                       num_workers=4, drop_last=True)
    val = DataLoader(WeakClips(cfg, cfg.val_meta), batch_size=64, num_workers=4)
    model = CRNN(cfg.n_mels, len(EVENTS)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.999))
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=5)
    best = 0.0
    for epoch in range(cfg.epochs):
        model.train()
        losses = []
        for x, valid, target in train:
            x, valid, target = x.to(device), valid.to(device), target.to(device)
            clip, _ = model(x, valid)
            loss = F.binary_cross_entropy(clip, target)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad)
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        outs, tgts = [], []
        with torch.no_grad():
            for x, valid, target in val:
                clip, _ = model(x.to(device), valid.to(device))
                outs.append(clip.cpu())
                tgts.append(target)
        f1 = f1_at(torch.cat(outs), torch.cat(tgts))
        scheduler.step(f1)
        print(f"epoch {epoch:2d}  bce {np.mean(losses):.4f}  val macro-F1 {f1:.4f}")
        if f1 > best:
            best = f1
            torch.save(model.state_dict(), "crnn_weak_best.pt")


if __name__ == "__main__":
    run(Config())
