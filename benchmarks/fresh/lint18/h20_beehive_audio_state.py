import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

STATES = ["queenright", "queenless", "pre_swarm", "robbing"]
SAMPLE_RATE, N_FFT, HOP, N_MELS = 16000, 1024, 256, 64


def mel_filterbank(n_fft, n_mels, sr, fmin=50.0, fmax=4000.0):
    to_mel = lambda f: 2595.0 * math.log10(1.0 + f / 700.0)
    mels = torch.linspace(to_mel(fmin), to_mel(fmax), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    lower, centre, upper = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    up = (bins - lower) / (centre - lower)
    down = (upper - bins) / (upper - centre)
    return torch.clamp(torch.minimum(up, down), min=0.0)


class HiveNet(nn.Module):
    def __init__(self, n_classes, width=32, p_drop=0.3):
        super().__init__()
        self.register_buffer("window", torch.hann_window(N_FFT))
        self.register_buffer("fbank", mel_filterbank(N_FFT, N_MELS, SAMPLE_RATE))
        self.convs = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1, bias=False), nn.BatchNorm2d(4 * width), nn.ReLU(),
        )
        self.p_drop = p_drop
        self.fc = nn.Linear(4 * width, n_classes)

    def log_mel(self, wave):
        spec = torch.stft(wave, N_FFT, HOP, window=self.window, return_complex=True).abs() ** 2
        return torch.log(self.fbank @ spec + 1e-6)

    def forward(self, wave):
        x = self.log_mel(wave)
        x = (x - x.mean(dim=(1, 2), keepdim=True)) / (x.std(dim=(1, 2), keepdim=True) + 1e-5)
        h = self.convs(x.unsqueeze(1)).mean(dim=(2, 3))
        return self.fc(F.dropout(h, self.p_drop, training=self.training))


def load_split(path):
    blob = torch.load(path, weights_only=True)
    return TensorDataset(blob["waves"].float(), blob["labels"].long())


def evaluate(model, loader):
    model.eval()
    correct = n = 0
    with torch.no_grad():
        for wave, y in loader:
            correct += (model(wave).argmax(dim=1) == y).sum().item()
            n += len(y)
    return correct / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/hive_audio/train.pt")
    p.add_argument("--val", default="data/hive_audio/val.pt")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--max-lr", type=float, default=3e-3)
    args = p.parse_args()
    torch.manual_seed(0)

    train = DataLoader(load_split(args.train), batch_size=32, shuffle=True, drop_last=True)
    val = DataLoader(load_split(args.val), batch_size=64)
    model = HiveNet(len(STATES))
    opt = torch.optim.AdamW(model.parameters(), lr=args.max_lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.max_lr, epochs=args.epochs, steps_per_epoch=len(train))

    for epoch in range(args.epochs):
        model.train()
        for wave, y in train:
            loss = F.cross_entropy(model(wave), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        print(f"epoch {epoch}: lr {sched.get_last_lr()[0]:.2e} val accuracy {evaluate(model, val):.3f}")
    torch.save(model.state_dict(), "hive_net.pt")


if __name__ == "__main__":
    main()
