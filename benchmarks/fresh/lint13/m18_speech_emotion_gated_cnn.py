"""Speech emotion recognition on CREMA-D (6 emotions) with a gated 1-D CNN over log-mel frames.

Utterances keep their natural length: batches are padded and a frame mask drives the pooling.
Gradient norms arriving at each gated block are recorded with full backward hooks.
python m18_speech_emotion_gated_cnn.py --manifest data/cremad/manifest.csv
"""
import argparse
import csv
import random
import wave
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

EMOTIONS = ["ANG", "DIS", "FEA", "HAP", "NEU", "SAD"]
SR, N_FFT, HOP, N_MELS = 16000, 512, 160, 64


def mel_filterbank(n_mels=N_MELS, n_fft=N_FFT, sr=SR):
    hz_to_mel = lambda f: 2595 * np.log10(1 + f / 700)
    mel_to_hz = lambda m: 700 * (10 ** (m / 2595) - 1)
    edges = mel_to_hz(np.linspace(hz_to_mel(0), hz_to_mel(sr / 2), n_mels + 2))
    bins = np.fft.rfftfreq(n_fft, 1 / sr)
    fb = np.zeros((n_mels, bins.size), dtype=np.float32)
    for m in range(n_mels):
        lo, mid, hi = edges[m:m + 3]
        fb[m] = np.clip(np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)), 0, None)
    return torch.from_numpy(fb)


class Utterances(Dataset):
    def __init__(self, rows, train):
        self.rows, self.train = rows, train
        self.fb, self.window = mel_filterbank(), torch.hann_window(N_FFT)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        with wave.open(self.rows[i]["path"], "rb") as f:
            audio = np.frombuffer(f.readframes(f.getnframes()), dtype=np.int16).astype(np.float32) / 32768
        wav = torch.from_numpy(audio)
        if self.train:
            wav = wav * (10 ** (random.uniform(-6, 6) / 20))
        spec = torch.stft(wav, N_FFT, HOP, window=self.window, return_complex=True).abs() ** 2
        logmel = torch.log(self.fb @ spec + 1e-6)
        logmel = (logmel - logmel.mean(1, keepdim=True)) / (logmel.std(1, keepdim=True) + 1e-5)
        return logmel, EMOTIONS.index(self.rows[i]["emotion"])


def pad_collate(batch):
    lengths = torch.tensor([x.shape[1] for x, _ in batch])
    feats = torch.zeros(len(batch), N_MELS, int(lengths.max()))
    for i, (x, _) in enumerate(batch):
        feats[i, :, :x.shape[1]] = x
    mask = torch.arange(feats.shape[2])[None, :] < lengths[:, None]
    return feats, mask, torch.tensor([y for _, y in batch])


class GatedBlock(nn.Module):
    def __init__(self, ch, k=5, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(ch, 2 * ch, k, padding=dilation * (k // 2), dilation=dilation)
        self.norm = nn.LayerNorm(ch)

    def forward(self, x, mask):
        a, b = self.conv(x).chunk(2, dim=1)
        gated = torch.tanh(a) * torch.sigmoid(b)
        gated = gated * mask.unsqueeze(1)
        out = self.norm((x + gated).transpose(1, 2)).transpose(1, 2)
        return out * mask.unsqueeze(1)


class EmotionNet(nn.Module):
    def __init__(self, ch=128, n_blocks=6):
        super().__init__()
        self.stem = nn.Conv1d(N_MELS, ch, 3, padding=1)
        self.blocks = nn.ModuleList(GatedBlock(ch, dilation=2 ** (i % 3)) for i in range(n_blocks))
        self.head = nn.Linear(ch, len(EMOTIONS))

    def forward(self, x, mask):
        h = self.stem(x) * mask.unsqueeze(1)
        for block in self.blocks:
            h = block(h, mask)
        m = mask.unsqueeze(1).float()
        return self.head((h * m).sum(-1) / m.sum(-1).clamp_min(1.0))


def attach_grad_monitor(model, store):
    for i, block in enumerate(model.blocks):
        block.register_full_backward_hook(
            lambda mod, g_in, g_out, i=i: store[i].append(g_in[0].norm().item()) if g_in[0] is not None else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", default="data/cremad/manifest.csv")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(args.manifest) as f:
        rows = list(csv.DictReader(f))
    train_rows = [r for r in rows if int(r["speaker"]) % 10 not in (0, 1)]
    test_rows = [r for r in rows if int(r["speaker"]) % 10 in (0, 1)]
    train = DataLoader(Utterances(train_rows, True), batch_size=args.batch_size, shuffle=True,
                       collate_fn=pad_collate, num_workers=4)
    test = DataLoader(Utterances(test_rows, False), batch_size=64, collate_fn=pad_collate, num_workers=4)
    model = EmotionNet().to(device)
    grad_log = defaultdict(list)
    attach_grad_monitor(model, grad_log)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for x, mask, y in train:
            x, mask, y = x.to(device), mask.to(device), y.to(device)
            loss = F.cross_entropy(model(x, mask), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        correct = n = 0
        with torch.no_grad():
            for x, mask, y in test:
                correct += (model(x.to(device), mask.to(device)).argmax(1).cpu() == y).sum().item()
                n += y.numel()
        grads = " ".join(f"{np.mean(v):.1e}" for _, v in sorted(grad_log.items()))
        grad_log.clear()
        print(f"epoch {epoch:2d}  loss {loss.item():.3f}  test acc {correct / n:.4f}  block grads {grads}")


if __name__ == "__main__":
    main()
