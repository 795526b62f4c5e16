import csv
import os
import random
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "metadata": "data/xeno_canto/train_metadata.csv",
    "audio_dir": "data/xeno_canto/clips",
    "sample_rate": 22050,
    "clip_seconds": 5.0,
    "n_fft": 1024,
    "hop": 320,
    "batch_size": 48,
    "epochs": 40,
    "lr": 5e-4,
    "workers": int(os.environ.get("LOADER_WORKERS", "0")),
    "prefetch": 4,
    "seed": 2024,
    "out": "runs/birdcalls",
}


def load_metadata(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    species = sorted({row["primary_label"] for row in rows})
    index = {name: i for i, name in enumerate(species)}
    return [(row["filename"], index[row["primary_label"]], row["fold"]) for row in rows], species


def read_clip(path):
    with wave.open(str(path), "rb") as handle:
        raw = handle.readframes(handle.getnframes())
        channels = handle.getnchannels()
    audio = np.frombuffer(raw, dtype=np.int16).astype(np.float32) / 32768.0
    return audio.reshape(-1, channels).mean(axis=1)


class BirdCalls(Dataset):
    def __init__(self, items, audio_dir, samples, train):
        self.items = items
        self.audio_dir = Path(audio_dir)
        self.samples = samples
        self.train = train

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        name, label, _ = self.items[index]
        audio = torch.from_numpy(read_clip(self.audio_dir / name))
        if audio.numel() < self.samples:
            audio = F.pad(audio, (0, self.samples - audio.numel()))
        if self.train:
            start = int(torch.randint(0, audio.numel() - self.samples + 1, (1,)))
            gain = float(torch.empty(1).uniform_(0.5, 1.5))
        else:
            start, gain = (audio.numel() - self.samples) // 2, 1.0
        return audio[start:start + self.samples] * gain, label


class PowerSpectrogram(nn.Module):
    def __init__(self, n_fft, hop):
        super().__init__()
        self.n_fft = n_fft
        self.hop = hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, audio):
        spec = torch.stft(audio, self.n_fft, hop_length=self.hop, window=self.window, center=True)
        power = spec.pow(2).sum(-1)
        logp = torch.log1p(power)
        return (logp - logp.mean(dim=-1, keepdim=True)) / (logp.std(dim=-1, keepdim=True) + 1e-5)


class CallClassifier(nn.Module):
    def __init__(self, n_fft, hop, classes):
        super().__init__()
        self.spectrogram = PowerSpectrogram(n_fft, hop)
        chans = [1, 32, 64, 128, 192]
        blocks = []
        for cin, cout in zip(chans[:-1], chans[1:]):
            blocks += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.GELU(), nn.MaxPool2d(2)]
        self.encoder = nn.Sequential(*blocks)
        self.dropout = nn.Dropout(0.25)
        self.classifier = nn.Linear(chans[-1], classes)

    def forward(self, audio):
        x = self.encoder(self.spectrogram(audio).unsqueeze(1))
        x = x.mean(dim=2).amax(dim=2)
        return self.classifier(self.dropout(x))


def make_loader(dataset, cfg, shuffle):
    return DataLoader(
        dataset,
        batch_size=cfg["batch_size"],
        shuffle=shuffle,
        drop_last=shuffle,
        num_workers=cfg["workers"],
        prefetch_factor=cfg["prefetch"],
        pin_memory=torch.cuda.is_available(),
    )


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for audio, labels in loader:
            preds = model(audio.to(device)).argmax(dim=1).cpu()
            correct += (preds == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def main(cfg=CONFIG):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    items, species = load_metadata(cfg["metadata"])
    samples = int(cfg["sample_rate"] * cfg["clip_seconds"])
    train_items = [it for it in items if it[2] != "0"]
    val_items = [it for it in items if it[2] == "0"]
    train_loader = make_loader(BirdCalls(train_items, cfg["audio_dir"], samples, True), cfg, shuffle=True)
    val_loader = make_loader(BirdCalls(val_items, cfg["audio_dir"], samples, False), cfg, shuffle=False)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = CallClassifier(cfg["n_fft"], cfg["hop"], len(species)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg["epochs"])
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)
    best = 0.0
    for epoch in range(cfg["epochs"]):
        model.train()
        seen, loss_sum = 0, 0.0
        for audio, labels in train_loader:
            audio, labels = audio.to(device), labels.to(device)
            loss = F.cross_entropy(model(audio), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * labels.numel()
            seen += labels.numel()
        scheduler.step()
        acc = evaluate(model, val_loader, device)
        print(f"epoch {epoch:03d} loss {loss_sum / seen:.4f} val acc {acc:.4f}")
        if acc > best:
            best = acc
            torch.save({"model": model.state_dict(), "species": species}, out / "best.pt")


if __name__ == "__main__":
    main()
