"""GTZAN genre data: 3-second log-mel excerpts, SpecAugment, and a small baseline to sanity-check the pipeline."""

from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader, Dataset

GENRES = ["blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae", "rock"]
SR = 22050
EXCERPT = 3 * SR


class GTZANExcerpts(Dataset):
    def __init__(self, root, files, train=True):
        self.paths = [Path(root) / f for f in files]
        self.labels = [GENRES.index(f.split("/")[0]) for f in files]
        self.train = train
        self.melspec = torchaudio.transforms.MelSpectrogram(SR, n_fft=2048, hop_length=512, n_mels=128)
        self.to_db = torchaudio.transforms.AmplitudeToDB(top_db=80)
        self.augment = nn.Sequential(
            torchaudio.transforms.FrequencyMasking(freq_mask_param=16),
            torchaudio.transforms.TimeMasking(time_mask_param=24),
        )

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        wav, sr = torchaudio.load(self.paths[i])
        wav = torchaudio.functional.resample(wav, sr, SR).mean(0)
        if wav.numel() < EXCERPT:
            wav = F.pad(wav, (0, EXCERPT - wav.numel()))
        start = torch.randint(0, wav.numel() - EXCERPT + 1, ()).item() if self.train else (wav.numel() - EXCERPT) // 2
        mel = self.to_db(self.melspec(wav[start : start + EXCERPT])).unsqueeze(0)
        mel = (mel - mel.mean()) / (mel.std() + 1e-6)
        if self.train:
            mel = self.augment(mel)
        return mel, self.labels[i]


def make_loaders(root, split_file, batch_size=32, workers=6):
    splits = {}
    for line in Path(split_file).read_text().splitlines():
        name, part = line.split()
        splits.setdefault(part, []).append(name)
    train = GTZANExcerpts(root, splits["train"], train=True)
    valid = GTZANExcerpts(root, splits["valid"], train=False)
    return (
        DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=workers, drop_last=True),
        DataLoader(valid, batch_size=batch_size, shuffle=False, num_workers=workers),
    )


class BaselineCNN(nn.Module):
    def __init__(self, n_classes=len(GENRES)):
        super().__init__()
        chans = [1, 32, 64, 128, 128]
        blocks = []
        for a, b in zip(chans[:-1], chans[1:]):
            blocks += [nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(), nn.MaxPool2d(2)]
        self.features = nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Sequential(nn.Dropout(0.3), nn.Linear(chans[-1], n_classes), nn.Softmax(dim=1))

    def forward(self, mel):
        return self.classifier(self.features(mel))


def quick_baseline(root="data/gtzan", split_file="data/gtzan/splits.txt", epochs=15, device="cuda"):
    train_dl, valid_dl = make_loaders(root, split_file)
    model = BaselineCNN().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for mel, genre in train_dl:
            mel, genre = mel.to(device), genre.to(device)
            loss = F.cross_entropy(model(mel), genre)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for mel, genre in valid_dl:
                correct += (model(mel.to(device)).argmax(1).cpu() == genre).sum().item()
                total += genre.numel()
        print(f"epoch {epoch:2d}  valid accuracy {correct / total:.3f}")
    return model


if __name__ == "__main__":
    quick_baseline()
