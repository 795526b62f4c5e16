import argparse
import csv
import random
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, Sampler


def load_wav(path):
    with wave.open(str(path), "rb") as fh:
        frames = fh.readframes(fh.getnframes())
        rate = fh.getframerate()
    audio = np.frombuffer(frames, dtype=np.int16).astype(np.float32) / 32768.0
    return torch.from_numpy(audio.copy()), rate


class UrbanClips(Dataset):
    def __init__(self, root, folds, max_seconds=4.0, rate=16000):
        self.root = Path(root)
        self.rows = []
        with open(self.root / "metadata" / "UrbanSound8K.csv", newline="") as fh:
            for row in csv.DictReader(fh):
                if int(row["fold"]) in folds:
                    self.rows.append(row)
        self.max_len = int(max_seconds * rate)
        self.durations = [float(r["end"]) - float(r["start"]) for r in self.rows]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        row = self.rows[idx]
        audio, _ = load_wav(self.root / "audio" / f"fold{row['fold']}" / row["slice_file_name"])
        return audio[: self.max_len], int(row["classID"])


class DurationBuckets(Sampler):
    def __init__(self, durations, batch_size, seed=0):
        super().__init__()
        self.durations = durations
        self.batch_size = batch_size
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        rng = random.Random(self.seed + self.epoch)
        order = sorted(range(len(self.durations)), key=lambda i: (round(self.durations[i]), rng.random()))
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        rng.shuffle(batches)
        return iter(batches)

    def __len__(self):
        return (len(self.durations) + self.batch_size - 1) // self.batch_size


def collate_padded(batch):
    clips, labels = zip(*batch)
    longest = max(c.numel() for c in clips)
    out = torch.zeros(len(clips), longest)
    for i, c in enumerate(clips):
        out[i, : c.numel()] = c
    return out, torch.tensor(labels)


class LogSpec(nn.Module):
    def __init__(self, n_fft=512, hop=160):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, audio):
        spec = torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True)
        return torch.log1p(spec.abs().pow(2)).unsqueeze(1)


class SoundNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.front = LogSpec()
        layers, ch = [], 1
        for out_ch in (32, 64, 128, 128):
            layers += [nn.Conv2d(ch, out_ch, 3, padding=1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(), nn.MaxPool2d(2)]
            ch = out_ch
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(ch, classes)

    def forward(self, audio):
        x = self.body(self.front(audio))
        return self.head(x.mean(dim=(2, 3)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="data/UrbanSound8K")
    parser.add_argument("--test-fold", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    train_set = UrbanClips(args.root, [f for f in range(1, 11) if f != args.test_fold])
    test_set = UrbanClips(args.root, [args.test_fold])
    buckets = DurationBuckets(train_set.durations, args.batch_size)
    train_loader = DataLoader(train_set, batch_sampler=buckets, collate_fn=collate_padded,
                              num_workers=args.workers)
    test_loader = DataLoader(test_set, batch_size=args.batch_size, shuffle=False,
                             collate_fn=collate_padded, num_workers=args.workers)
    model = SoundNet()
    model.to(device)
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 1e-2}, {"params": no_decay, "weight_decay": 0.0}], lr=args.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                   steps_per_epoch=len(train_loader))
    for epoch in range(args.epochs):
        buckets.set_epoch(epoch)
        model.train()
        for audio, labels in train_loader:
            audio = audio.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            loss = F.cross_entropy(model(audio), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
        model.eval()
        hits = 0
        with torch.inference_mode():
            for audio, labels in test_loader:
                hits += (model(audio.to(device)).argmax(1).cpu() == labels).sum().item()
        print(f"epoch {epoch} fold {args.test_fold} accuracy {hits / len(test_set):.3f}")
    torch.save(model.state_dict(), f"soundnet_fold{args.test_fold}.pt")


if __name__ == "__main__":
    main()
