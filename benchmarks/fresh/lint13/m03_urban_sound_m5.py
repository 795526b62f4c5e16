"""UrbanSound8K classification with an M5-style raw-waveform CNN (Dai et al., 2017).

Folds 1-9 train, fold 10 tests. Clips are resampled offline to 8 kHz mono 16-bit WAV files.
python m03_urban_sound_m5.py --root data/UrbanSound8K --epochs 40
"""
import argparse
import csv
import random
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SAMPLE_RATE = 8000


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("data/UrbanSound8K"))
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--clip-seconds", type=float, default=4.0)
    ap.add_argument("--test-fold", type=int, default=10)
    ap.add_argument("--workers", type=int, default=4)
    return ap.parse_args()


def read_wav(path):
    with wave.open(str(path), "rb") as f:
        frames = f.readframes(f.getnframes())
    audio = np.frombuffer(frames, dtype=np.int16).astype(np.float32) / 32768.0
    return torch.from_numpy(audio).unsqueeze(0)


class UrbanSound(Dataset):
    def __init__(self, root, folds, clip_seconds, train):
        self.root, self.train = root, train
        self.max_len = int(clip_seconds * SAMPLE_RATE)
        with open(root / "metadata" / "UrbanSound8K.csv") as f:
            rows = [r for r in csv.DictReader(f) if int(r["fold"]) in folds]
        self.items = [(f"fold{r['fold']}/{r['slice_file_name']}", int(r["classID"])) for r in rows]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        rel, label = self.items[i]
        wav = read_wav(self.root / "audio8k" / rel)
        if wav.shape[-1] > self.max_len:
            start = random.randrange(wav.shape[-1] - self.max_len) if self.train else 0
            wav = wav[:, start:start + self.max_len]
        wav = wav / (wav.abs().max() + 1e-6)
        if self.train:
            wav = wav * random.uniform(0.6, 1.0)
        return wav, label


class M5(nn.Module):
    def __init__(self, n_classes=10, width=128):
        super().__init__()

        def block(cin, cout, k, stride=1):
            return nn.Sequential(
                nn.Conv1d(cin, cout, k, stride=stride, padding=k // 2, bias=False),
                nn.BatchNorm1d(cout),
                nn.ReLU(),
                nn.MaxPool1d(4),
            )

        self.net = nn.Sequential(
            block(1, width, 80, stride=4),
            block(width, width, 3),
            block(width, width * 2, 3),
            block(width * 2, width * 4, 3),
        )
        self.fc = nn.Linear(width * 4, n_classes)

    def forward(self, x):
        h = self.net(x)
        return self.fc(h.mean(dim=-1))


def accuracy(model, loader, device):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        for wav, label in loader:
            pred = model(wav.to(device)).argmax(-1).cpu()
            hits += (pred == label).sum().item()
            total += label.numel()
    return hits / total


def main():
    args = get_args()
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_folds = [f for f in range(1, 11) if f != args.test_fold]
    train_set = UrbanSound(args.root, train_folds, args.clip_seconds, train=True)
    test_set = UrbanSound(args.root, [args.test_fold], args.clip_seconds, train=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, drop_last=True, pin_memory=True)
    test_loader = DataLoader(test_set, batch_size=args.batch_size, num_workers=args.workers)

    model = M5().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.1)

    for epoch in range(args.epochs):
        model.train()
        running, seen = 0.0, 0
        for wav, label in train_loader:
            wav, label = wav.to(device, non_blocking=True), label.to(device, non_blocking=True)
            loss = F.cross_entropy(model(wav), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * label.size(0)
            seen += label.size(0)
        scheduler.step()
        acc = accuracy(model, test_loader, device)
        print(f"epoch {epoch + 1:2d}  loss {running / seen:.4f}  fold-{args.test_fold} acc {acc:.3f}")
    torch.save(model.state_dict(), "m5_urbansound.pt")


if __name__ == "__main__":
    main()
