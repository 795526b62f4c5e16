"""Speech Commands v2 dataset with on-the-fly augmentation: random time shift, mixing in a
background-noise clip at a random SNR, and random gain. Returns log-mel features."""

import os
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset

SR, CLIP = 16000, 16000
LABELS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go", "_silence_", "_unknown_"]


def read_list(root, name):
    with open(os.path.join(root, name)) as f:
        return {line.strip() for line in f if line.strip()}


class SpeechCommands(Dataset):
    def __init__(self, root, split, augment=False, seed=1234):
        self.root = Path(root)
        val, test = read_list(root, "validation_list.txt"), read_list(root, "testing_list.txt")
        files = sorted(str(p.relative_to(self.root)) for p in self.root.glob("*/*.wav")
                       if not p.parent.name.startswith("_"))
        keep = {"train": lambda f: f not in val and f not in test,
                "validation": lambda f: f in val, "test": lambda f: f in test}[split]
        self.files = [f for f in files if keep(f)]
        self.augment = augment
        self.rng = np.random.default_rng(seed)
        self.noises = [sf.read(p, dtype="float32")[0] for p in sorted(self.root.glob("_background_noise_/*.wav"))]
        self.melspec = torchaudio.transforms.MelSpectrogram(SR, n_fft=512, hop_length=160, n_mels=64)

    def __len__(self):
        return len(self.files)

    def label_of(self, rel):
        word = rel.split("/")[0]
        return LABELS.index(word) if word in LABELS else LABELS.index("_unknown_")

    def _augment(self, wav):
        shift = int(self.rng.integers(-1600, 1601))
        wav = np.roll(wav, shift)
        if shift > 0:
            wav[:shift] = 0.0
        elif shift < 0:
            wav[shift:] = 0.0
        if self.noises and self.rng.random() < 0.8:
            noise = self.noises[self.rng.integers(len(self.noises))]
            start = self.rng.integers(0, len(noise) - CLIP)
            segment = noise[start:start + CLIP]
            snr_db = self.rng.uniform(5.0, 20.0)
            scale = np.sqrt((wav ** 2).mean() / ((segment ** 2).mean() * 10 ** (snr_db / 10) + 1e-9))
            wav = wav + scale * segment
        return wav * self.rng.uniform(0.7, 1.3)

    def __getitem__(self, i):
        rel = self.files[i]
        wav, sr = sf.read(self.root / rel, dtype="float32")
        assert sr == SR, rel
        wav = np.pad(wav, (0, max(0, CLIP - len(wav))))[:CLIP]
        if self.augment:
            wav = self._augment(wav)
        feats = torch.log(self.melspec(torch.from_numpy(wav.astype(np.float32))) + 1e-6)
        return feats, self.label_of(rel)


def make_loaders(root, batch_size=256, workers=8):
    train = SpeechCommands(root, "train", augment=True)
    val = SpeechCommands(root, "validation")
    train_dl = DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=workers,
                          persistent_workers=True, pin_memory=True, drop_last=True)
    val_dl = DataLoader(val, batch_size=batch_size, num_workers=workers)
    return train_dl, val_dl


if __name__ == "__main__":
    train_dl, val_dl = make_loaders("data/speech_commands_v0.02")
    feats, labels = next(iter(train_dl))
    print("batch", tuple(feats.shape), "labels", torch.bincount(labels, minlength=len(LABELS)).tolist())
    print(len(train_dl.dataset), "training clips,", len(val_dl.dataset), "validation clips")
