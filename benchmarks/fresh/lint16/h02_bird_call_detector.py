"""Detect bird calls in 5-second field-recorder clips (binary, clip level)."""
import copy
import json
import os
import random
import wave

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "manifest": "data/birdcalls/manifest.jsonl",
    "audio_dir": "data/birdcalls/clips",
    "sample_rate": 22050,
    "clip_seconds": 5.0,
    "n_fft": 1024,
    "hop": 256,
    "batch_size": 24,
    "epochs": 25,
    "lr": 3e-4,
    "seed": 13,
    "out": "checkpoints/birdcall_cnn.pt",
}


def read_wav(path, target_len):
    with wave.open(path, "rb") as wf:
        raw = wf.readframes(wf.getnframes())
        channels = wf.getnchannels()
    audio = np.frombuffer(raw, dtype=np.int16).astype(np.float32) / 32768.0
    if channels > 1:
        audio = audio.reshape(-1, channels).mean(axis=1)
    if audio.shape[0] < target_len:
        audio = np.pad(audio, (0, target_len - audio.shape[0]))
    return torch.from_numpy(audio[:target_len].copy())


class Spectrogram(nn.Module):
    def __init__(self, n_fft, hop):
        super().__init__()
        self.n_fft = n_fft
        self.hop = hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, hop_length=self.hop, window=self.window,
                          center=True, return_complex=False)
        power = spec[..., 0] ** 2 + spec[..., 1] ** 2
        return torch.log1p(power)


class ClipDataset(Dataset):
    def __init__(self, items, cfg):
        self.items = items
        self.audio_dir = cfg["audio_dir"]
        self.length = int(cfg["sample_rate"] * cfg["clip_seconds"])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        item = self.items[i]
        wav = read_wav(os.path.join(self.audio_dir, item["file"]), self.length)
        return wav, torch.tensor(float(item["has_call"]))


class CallDetector(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.frontend = Spectrogram(cfg["n_fft"], cfg["hop"])
        self.norm = nn.BatchNorm2d(1)
        blocks = []
        ch = 1
        for out_ch in (16, 32, 64, 96):
            blocks += [nn.Conv2d(ch, out_ch, 3, padding=1, bias=False), nn.BatchNorm2d(out_ch),
                       nn.ReLU(inplace=True), nn.MaxPool2d(2)]
            ch = out_ch
        self.features = nn.Sequential(*blocks)
        self.classifier = nn.Linear(ch, 1)

    def forward(self, wav):
        x = self.norm(self.frontend(wav).unsqueeze(1))
        x = self.features(x)
        x = x.mean(dim=(2, 3))
        return self.classifier(x).squeeze(1)


def load_manifest(path):
    with open(path) as fh:
        items = [json.loads(line) for line in fh if line.strip()]
    train = [it for it in items if it["fold"] != "val"]
    val = [it for it in items if it["fold"] == "val"]
    return train, val


def evaluate(model, loader, device):
    model.eval()
    tp = fp = fn = 0
    with torch.no_grad():
        for wav, y in loader:
            prob = torch.sigmoid(model(wav.to(device)))
            pred = (prob > 0.5).float().cpu()
            tp += int(((pred == 1) & (y == 1)).sum())
            fp += int(((pred == 1) & (y == 0)).sum())
            fn += int(((pred == 0) & (y == 1)).sum())
    precision = tp / max(tp + fp, 1)
    recall = tp / max(tp + fn, 1)
    return 2 * precision * recall / max(precision + recall, 1e-8)


def main(cfg=CONFIG):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_items, val_items = load_manifest(cfg["manifest"])
    train_dl = DataLoader(ClipDataset(train_items, cfg), batch_size=cfg["batch_size"], shuffle=True,
                          drop_last=True)
    val_dl = DataLoader(ClipDataset(val_items, cfg), batch_size=cfg["batch_size"])

    model = CallDetector(cfg).to(device)
    positives = sum(int(it["has_call"]) for it in train_items)
    pos_weight = torch.tensor((len(train_items) - positives) / max(positives, 1), device=device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    best_f1, best_state = -1.0, None
    for epoch in range(cfg["epochs"]):
        model.train()
        running, seen = 0.0, 0
        for wav, y in train_dl:
            wav, y = wav.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(wav), y)
            loss.backward()
            optimizer.step()
            running += loss.item() * y.size(0)
            seen += y.size(0)
        f1 = evaluate(model, val_dl, device)
        print(f"epoch {epoch}: train loss {running / max(seen, 1):.4f}  F1 {f1:.3f}")
        if f1 > best_f1:
            best_f1, best_state = f1, copy.deepcopy(model.state_dict())

    os.makedirs(os.path.dirname(cfg["out"]), exist_ok=True)
    torch.save({"model": best_state, "f1": best_f1, "config": cfg}, cfg["out"])


if __name__ == "__main__":
    main()
