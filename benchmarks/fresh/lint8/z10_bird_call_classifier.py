"""Bird species from field recordings (xeno-canto subset): random 5 s crops, gain and noise mixing."""
import argparse
import wave

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, Dataset

SR = 22050
CLIP = 5 * SR


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--meta", default="data/birdcalls/metadata.csv")
    p.add_argument("--audio-dir", default="data/birdcalls/wav22k")
    p.add_argument("--noise", default="data/birdcalls/ambient_noise.npy")
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=48)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--workers", type=int, default=6)
    p.add_argument("--seed", type=int, default=5)
    return p.parse_args()


def load_pcm(path):
    with wave.open(path, "rb") as f:
        pcm = np.frombuffer(f.readframes(f.getnframes()), dtype=np.int16)
    return pcm.astype(np.float32) / 32768.0


class BirdClips(Dataset):
    def __init__(self, files, labels, noise_bank, train, seed=0):
        self.files, self.labels = files, labels
        self.noise_bank = noise_bank
        self.train = train
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.files)

    def _crop(self, audio):
        if len(audio) < CLIP:
            audio = np.pad(audio, (0, CLIP - len(audio)))
        start = self.rng.integers(0, len(audio) - CLIP + 1) if self.train else (len(audio) - CLIP) // 2
        return audio[start:start + CLIP]

    def __getitem__(self, i):
        audio = self._crop(load_pcm(self.files[i]))
        if self.train:
            audio = audio * self.rng.uniform(0.5, 1.5)
            noise = self.noise_bank[self.rng.integers(len(self.noise_bank))]
            audio = audio + self.rng.uniform(0.0, 0.3) * noise[:CLIP]
        return torch.from_numpy(audio.astype(np.float32)), self.labels[i]


class MelFrontEnd(nn.Module):
    def __init__(self, n_fft=1024, hop=320, n_bins=128):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.pool = nn.AdaptiveAvgPool2d((n_bins, None))

    def forward(self, audio):
        spec = torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True).abs()
        return self.pool(torch.log(spec.pow(2) + 1e-6).unsqueeze(1))


class BirdNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        chans = [1, 32, 64, 128, 256]
        layers = []
        for cin, cout in zip(chans[:-1], chans[1:]):
            layers += [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.GELU(), nn.MaxPool2d(2)]
        self.front = MelFrontEnd()
        self.input_norm = nn.BatchNorm2d(1)
        self.cnn = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(256, n_classes))

    def forward(self, audio):
        return self.head(self.cnn(self.input_norm(self.front(audio))))


def main():
    args = parse_args()
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    meta = pd.read_csv(args.meta)
    species = sorted(meta["species"].unique())
    labels = meta["species"].map({s: k for k, s in enumerate(species)}).tolist()
    files = [f"{args.audio_dir}/{name}" for name in meta["filename"]]
    tr_f, va_f, tr_y, va_y = train_test_split(files, labels, test_size=0.15, stratify=labels, random_state=args.seed)
    noise = np.load(args.noise)

    train_dl = DataLoader(BirdClips(tr_f, tr_y, noise, train=True, seed=args.seed), batch_size=args.batch_size,
                          shuffle=True, num_workers=args.workers, drop_last=True, persistent_workers=True)
    val_dl = DataLoader(BirdClips(va_f, va_y, noise, train=False), batch_size=64, num_workers=args.workers)

    model = BirdNet(len(species)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        total, seen = 0.0, 0
        for audio, y in train_dl:
            audio, y = audio.to(device), y.to(device)
            opt.zero_grad()
            loss = criterion(model(audio), y)
            loss.backward()
            opt.step()
            total += loss.item() * y.size(0)
            seen += y.size(0)
        sched.step()
        model.eval()
        correct = count = 0
        with torch.no_grad():
            for audio, y in val_dl:
                correct += (model(audio.to(device)).argmax(dim=1).cpu() == y).sum().item()
                count += y.size(0)
        print(f"epoch {epoch:2d}  loss {total / seen:.4f}  val acc {correct / count:.3f}")
    torch.save(model.state_dict(), "birdnet.pt")


if __name__ == "__main__":
    main()
