"""Data pipeline for the keyword-spotting model: Speech Commands v2, 1 s clips at 16 kHz.

The clips are decoded once and cached as one float32 array per split (data/cache/<split>.npy),
so that an epoch does not hit the disk.
"""

import argparse
import logging
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("kws.data")

SAMPLE_RATE = 16000
CLIP_LEN = SAMPLE_RATE
KEYWORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"]


def list_split(root: Path, split: str):
    names = set((root / f"{split}_list.txt").read_text().split())
    files, labels = [], []
    for label, word in enumerate(KEYWORDS):
        for wav in sorted((root / word).glob("*.wav")):
            if f"{word}/{wav.name}" in names:
                files.append(wav)
                labels.append(label)
    return files, labels


def decode_all(files):
    out = np.zeros((len(files), CLIP_LEN), dtype=np.float32)
    for i, f in enumerate(files):
        audio, sr = sf.read(f, dtype="float32")
        assert sr == SAMPLE_RATE, f"{f}: {sr} Hz"
        out[i, : min(len(audio), CLIP_LEN)] = audio[:CLIP_LEN]
    return out


class KeywordClips(Dataset):
    def __init__(self, root, split, cache_dir="data/cache", augment=False):
        root = Path(root)
        files, labels = list_split(root, split)
        cache = Path(cache_dir) / f"{split}.npy"
        if cache.exists():
            self.clips = np.load(cache)
        else:
            self.clips = decode_all(files)
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.save(cache, self.clips)
        self.labels = torch.tensor(labels)
        self.augment = augment
        self.melspec = torchaudio.transforms.MelSpectrogram(SAMPLE_RATE, n_fft=480, hop_length=160, n_mels=40)
        log.info("%s: %d clips", split, len(self.labels))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        wav = torch.from_numpy(self.clips[idx])
        if self.augment:
            gain = float(torch.empty(()).uniform_(0.7, 1.3))
            wav.mul_(gain)
            shift = int(torch.randint(-1600, 1600, ()))
            wav = torch.roll(wav, shifts=shift)
        feats = torch.log(self.melspec(wav) + 1e-6)
        return feats.unsqueeze(0), self.labels[idx]


def build_loaders(root, batch_size=128, workers=0):
    train_set = KeywordClips(root, "training", augment=True)
    val_set = KeywordClips(root, "validation")
    test_set = KeywordClips(root, "testing")
    train_loader = DataLoader(train_set, batch_size=batch_size, num_workers=workers, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=256, num_workers=workers)
    test_loader = DataLoader(test_set, batch_size=256, num_workers=workers)
    return train_loader, val_loader, test_loader


def feature_stats(loader, max_batches=50):
    total, sq, n = 0.0, 0.0, 0
    for i, (x, _) in enumerate(loader):
        if i == max_batches:
            break
        total += x.sum().item()
        sq += (x**2).sum().item()
        n += x.numel()
    mean = total / n
    return mean, (sq / n - mean**2) ** 0.5


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", default="data/speech_commands_v0.02")
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    train_loader, val_loader, _ = build_loaders(args.root, workers=args.workers)
    x, y = next(iter(train_loader))
    log.info("batch %s labels %s", tuple(x.shape), torch.bincount(y, minlength=len(KEYWORDS)).tolist())
    log.info("train feature mean/std: %.3f / %.3f", *feature_stats(train_loader))
    log.info("val feature mean/std: %.3f / %.3f", *feature_stats(val_loader))
