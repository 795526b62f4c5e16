"""Speech / music frame detector for broadcast archives (log-mel CNN, two independent outputs)."""
import argparse
import json
import math
import os
import random
import wave

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SR = 16000
LABELS = ["speech", "music"]


def mel_filterbank(n_fft, n_mels, sr, fmin=20.0, fmax=None):
    fmax = fmax or sr / 2
    hz_to_mel = lambda f: 2595.0 * math.log10(1.0 + f / 700.0)
    mels = torch.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for m in range(n_mels):
        lo, c, hi = hz[m], hz[m + 1], hz[m + 2]
        fb[m] = torch.clamp(torch.minimum((bins - lo) / (c - lo), (hi - bins) / (hi - c)), min=0.0)
    return fb


class LogMel(nn.Module):
    def __init__(self, n_fft=512, hop=160, n_mels=64):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", mel_filterbank(n_fft, n_mels, SR))

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs().pow(2)
        return torch.log(torch.einsum("mf,bft->bmt", self.fb, power) + 1e-6)


class Segments(Dataset):
    def __init__(self, manifest, seconds=2.0):
        with open(manifest) as fh:
            self.items = [json.loads(l) for l in fh if l.strip()]
        self.length = int(seconds * SR)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        it = self.items[i]
        with wave.open(it["wav"], "rb") as wf:
            wf.setpos(int(it["start"] * SR))
            pcm = np.frombuffer(wf.readframes(self.length), dtype=np.int16)
        x = torch.from_numpy(pcm.astype(np.float32) / 32768.0)
        x = F.pad(x, (0, self.length - x.numel()))
        return x, torch.tensor([float(it[k]) for k in LABELS])


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = LogMel()
        chans = [1, 32, 64, 128]
        layers = []
        for a, b in zip(chans[:-1], chans[1:]):
            layers += [nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(), nn.MaxPool2d(2)]
        self.cnn = nn.Sequential(*layers)
        self.head = nn.Linear(128, len(LABELS))

    def forward(self, wav):
        x = self.frontend(wav)
        x = (x - x.mean(dim=-1, keepdim=True)) / x.std(dim=-1, keepdim=True).clamp_min(1e-5)
        x = x.unsqueeze(1)
        return self.head(self.cnn(x).amax(dim=(2, 3)))


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros(len(LABELS))
    n = 0
    for x, y in loader:
        probs = torch.sigmoid(model(x.to(device))).cpu()
        correct += ((probs > 0.5).float() == y).float().sum(0)
        n += y.size(0)
    return (correct / max(n, 1)).tolist()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/broadcast/train.jsonl")
    ap.add_argument("--val", default="data/broadcast/val.jsonl")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-lr", type=float, default=3e-3)
    ap.add_argument("--out", default="checkpoints/speech_music.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(Segments(args.train), batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(Segments(args.val), batch_size=args.batch_size)
    model = Detector().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.max_lr / 25)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.max_lr, epochs=args.epochs,
                                                    steps_per_epoch=len(train_dl))
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * y.size(0)
            n += y.size(0)
        acc = evaluate(model, val_dl, device)
        print(f"epoch {epoch}: loss {total / max(n, 1):.4f}  " +
              "  ".join(f"{k} acc {a:.3f}" for k, a in zip(LABELS, acc)))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
