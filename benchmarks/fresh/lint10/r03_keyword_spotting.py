"""Twelve-keyword spotting on one-second clips (Speech Commands v2 layout).

A compact depthwise-separable CNN on log-mel features, trained with a small callback trainer.
"""
import math
import random
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

WORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]
LABELS = WORDS + ["_silence_", "_unknown_"]
SAMPLE_RATE = 16000
HPARAMS = {
    "epochs": 40,
    "batch_size": 128,
    "lr": 0.05,
    "momentum": 0.9,
    "decay_at_epochs": [20, 30, 36],
    "decay_factor": 0.2,
    "n_mels": 40,
}


def mel_filterbank(n_fft, n_mels, sr):
    def hz_to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    mels = np.linspace(hz_to_mel(20.0), hz_to_mel(sr / 2), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = np.floor((n_fft + 1) * hz / sr).astype(int)
    fb = np.zeros((n_mels, n_fft // 2 + 1), dtype=np.float32)
    for m in range(1, n_mels + 1):
        lo, mid, hi = bins[m - 1], bins[m], bins[m + 1]
        fb[m - 1, lo:mid] = (np.arange(lo, mid) - lo) / max(mid - lo, 1)
        fb[m - 1, mid:hi] = (hi - np.arange(mid, hi)) / max(hi - mid, 1)
    return torch.from_numpy(fb)


class SpeechCommands(Dataset):
    def __init__(self, root: Path, split_list: Path, n_mels: int, train: bool):
        held_out = set(split_list.read_text().split())
        self.items = []
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_")):
            label = LABELS.index(folder.name) if folder.name in WORDS else LABELS.index("_unknown_")
            for wav in sorted(folder.glob("*.wav")):
                rel = f"{folder.name}/{wav.name}"
                if (rel in held_out) != train:
                    self.items.append((wav, label))
        self.window = torch.hann_window(480)
        self.fb = mel_filterbank(512, n_mels, SAMPLE_RATE)
        self.train = train

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        with wave.open(str(path)) as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        audio = torch.zeros(SAMPLE_RATE)
        clip = torch.from_numpy(pcm.astype(np.float32) / 32768.0)[:SAMPLE_RATE]
        audio[: clip.numel()] = clip
        if self.train:
            audio = torch.roll(audio, random.randint(-1600, 1600))
        spec = torch.stft(audio, n_fft=512, hop_length=160, win_length=480, window=self.window,
                          return_complex=True).abs().pow(2)
        logmel = torch.log(self.fb @ spec + 1e-6)
        return (logmel - logmel.mean()) / (logmel.std() + 1e-5), label


class DSBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.dw = nn.Conv2d(ch, ch, 3, padding=1, groups=ch, bias=False)
        self.pw = nn.Conv2d(ch, ch, 1, bias=False)
        self.bn1, self.bn2 = nn.BatchNorm2d(ch), nn.BatchNorm2d(ch)

    def forward(self, x):
        return F.relu(self.bn2(self.pw(F.relu(self.bn1(self.dw(x))))))


class DSCNN(nn.Module):
    def __init__(self, n_classes, ch=64, depth=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, ch, (10, 4), stride=(2, 2), padding=(5, 1), bias=False),
                                  nn.BatchNorm2d(ch), nn.ReLU())
        self.blocks = nn.Sequential(*[DSBlock(ch) for _ in range(depth)])
        self.head = nn.Linear(ch, n_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x.unsqueeze(1)))
        return self.head(x.mean(dim=(2, 3)))


class CallbackTrainer:
    def __init__(self, model, hp, device):
        self.model, self.hp, self.device = model.to(device), hp, device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=hp["lr"], momentum=hp["momentum"])
        self.schedule = torch.optim.lr_scheduler.MultiStepLR(
            self.optimizer, milestones=hp["decay_at_epochs"], gamma=hp["decay_factor"])

    def on_batch_end(self, loss):
        self.optimizer.step()
        self.schedule.step()

    def on_epoch_end(self, epoch, acc):
        lr = self.optimizer.param_groups[0]["lr"]
        print(f"epoch {epoch:02d}  lr {lr:.2e}  valid acc {acc:.4f}")

    def train_one_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.on_batch_end(loss.item())

    @torch.no_grad()
    def accuracy(self, loader):
        self.model.eval()
        hits = total = 0
        for x, y in loader:
            hits += (self.model(x.to(self.device)).argmax(dim=1).cpu() == y).sum().item()
            total += y.numel()
        return hits / total

    def fit(self, train_loader, valid_loader):
        for epoch in range(self.hp["epochs"]):
            self.train_one_epoch(train_loader)
            self.on_epoch_end(epoch, self.accuracy(valid_loader))


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    root = Path("data/speech_commands_v2")
    train_set = SpeechCommands(root, root / "validation_list.txt", HPARAMS["n_mels"], train=True)
    valid_set = SpeechCommands(root, root / "validation_list.txt", HPARAMS["n_mels"], train=False)
    trainer = CallbackTrainer(DSCNN(len(LABELS)), HPARAMS, "cuda" if torch.cuda.is_available() else "cpu")
    trainer.fit(DataLoader(train_set, HPARAMS["batch_size"], shuffle=True, num_workers=4, drop_last=True),
                DataLoader(valid_set, HPARAMS["batch_size"], num_workers=4))
