"""Speech emotion recognition on RAVDESS (8 emotions) from log-mel spectrograms.

The convolutional encoder comes from our speaker-ID pre-training run; here it is kept fixed
and only the emotion head is trained. Audio was converted to 16 kHz mono beforehand.
"""
import glob
import os
import wave
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

EMOTIONS = ["neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"]


@dataclass
class Config:
    wav_dir: str = "data/ravdess16k"
    encoder_ckpt: str = "pretrained/speaker_encoder.pt"
    sr: int = 16000
    n_fft: int = 512
    hop: int = 160
    n_mels: int = 64
    clip_seconds: float = 3.0
    test_actors: tuple = (21, 22, 23, 24)
    freeze_encoder: bool = True
    batch_size: int = 32
    epochs: int = 25
    lr: float = 1e-3


def mel_filterbank(sr, n_fft, n_mels):
    hz_to_mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    mel_to_hz = lambda m: 700.0 * (10 ** (m / 2595.0) - 1.0)
    mels = np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2)
    bins = np.floor((n_fft + 1) * mel_to_hz(mels) / sr).astype(int)
    fb = np.zeros((n_mels, n_fft // 2 + 1))
    for m in range(1, n_mels + 1):
        left, centre, right = bins[m - 1], bins[m], bins[m + 1]
        fb[m - 1, left:centre] = (np.arange(left, centre) - left) / max(centre - left, 1)
        fb[m - 1, centre:right] = (right - np.arange(centre, right)) / max(right - centre, 1)
    return torch.tensor(fb, dtype=torch.float32)


class RavdessDataset(Dataset):
    def __init__(self, cfg, files, train):
        self.cfg, self.files, self.train = cfg, files, train
        self.fb = mel_filterbank(cfg.sr, cfg.n_fft, cfg.n_mels)
        self.window = torch.hann_window(cfg.n_fft)
        self.length = int(cfg.sr * cfg.clip_seconds)

    def __len__(self):
        return len(self.files)

    def _read(self, path):
        with wave.open(path, "rb") as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        return torch.from_numpy(pcm.astype(np.float32) / 32768.0)

    def __getitem__(self, i):
        x = self._read(self.files[i])
        if len(x) < self.length:
            x = F.pad(x, (0, self.length - len(x)))
        start = torch.randint(0, len(x) - self.length + 1, (1,)).item() if self.train else (len(x) - self.length) // 2
        x = x[start:start + self.length]
        spec = torch.stft(x, self.cfg.n_fft, self.cfg.hop, window=self.window, return_complex=True).abs() ** 2
        logmel = torch.log(self.fb @ spec + 1e-6)
        logmel = (logmel - logmel.mean()) / (logmel.std() + 1e-5)
        label = int(os.path.basename(self.files[i]).split("-")[2]) - 1
        return logmel.unsqueeze(0), label


def block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.GroupNorm(8, c_out),
                         nn.GELU(), nn.MaxPool2d(2))


class EmotionNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.encoder = nn.Sequential(block(1, 32), block(32, 64), block(64, 128), block(128, 256),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(256, n_classes))

    def forward(self, x):
        return self.head(self.encoder(x))


def set_trainable(module, flag):
    for p in module.parameters():
        p.require_grad = flag


def split_files(cfg):
    files = sorted(glob.glob(os.path.join(cfg.wav_dir, "Actor_*", "*.wav")))
    actor = lambda f: int(os.path.basename(f).split("-")[6].split(".")[0])
    train = [f for f in files if actor(f) not in cfg.test_actors]
    test = [f for f in files if actor(f) in cfg.test_actors]
    return train, test


def main(cfg=Config()):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_files, test_files = split_files(cfg)
    train_dl = DataLoader(RavdessDataset(cfg, train_files, True), batch_size=cfg.batch_size,
                          shuffle=True, num_workers=4)
    test_dl = DataLoader(RavdessDataset(cfg, test_files, False), batch_size=64, num_workers=4)

    model = EmotionNet(len(EMOTIONS))
    model.encoder.load_state_dict(torch.load(cfg.encoder_ckpt, map_location="cpu", weights_only=True))
    set_trainable(model.encoder, not cfg.freeze_encoder)
    model.to(device)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)

    for epoch in range(cfg.epochs):
        model.train()
        total, n = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, n = total + loss.item() * len(y), n + len(y)
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_dl:
                correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
        print(f"epoch {epoch + 1:02d} loss {total / n:.4f} test acc {correct / len(test_dl.dataset):.3f}")
    torch.save(model.head.state_dict(), "emotion_head.pt")


if __name__ == "__main__":
    main()
