import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

KEYWORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go", "_unknown_", "_silence_"]


def mel_filterbank(n_fft, n_mels, sample_rate):
    freqs = torch.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    mel = 2595 * torch.log10(1 + freqs / 700)
    edges = torch.linspace(mel[0].item(), mel[-1].item(), n_mels + 2)
    lower, center, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    return torch.clamp(torch.minimum((mel - lower) / (center - lower), (upper - mel) / (upper - center)), min=0.0)


class LogMel(nn.Module):
    def __init__(self, n_fft=480, hop=160, n_mels=40, sample_rate=16000):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fbank", mel_filterbank(n_fft, n_mels, sample_rate))

    def forward(self, wave):
        spec = torch.stft(wave, self.n_fft, self.hop, window=self.window, return_complex=True).abs().pow(2)
        return torch.log(self.fbank @ spec + 1e-6)


class TemporalBlock(nn.Module):
    def __init__(self, channels, dilation, dropout):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False)
        self.norm1 = nn.BatchNorm1d(channels)
        self.conv2 = nn.Conv1d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False)
        self.norm2 = nn.BatchNorm1d(channels)
        self.dropout = dropout

    def forward(self, x):
        h = F.relu(self.norm1(self.conv1(x)))
        h = F.dropout(h, p=self.dropout)
        h = self.norm2(self.conv2(h))
        return F.relu(x + h)


class KeywordTCN(nn.Module):
    def __init__(self, n_classes, channels=64, dropout=0.1):
        super().__init__()
        self.frontend = LogMel()
        self.stem = nn.Conv1d(40, channels, 1)
        self.blocks = nn.Sequential(*[TemporalBlock(channels, d, dropout) for d in (1, 2, 4, 8)])
        self.fc = nn.Linear(channels, n_classes)

    def forward(self, wave):
        feats = self.frontend(wave)
        feats = (feats - feats.mean(dim=-1, keepdim=True)) / (feats.std(dim=-1, keepdim=True) + 1e-5)
        return self.fc(self.blocks(self.stem(feats)).mean(dim=-1))


def accuracy(model, loader, device):
    model.eval()
    hits = n = 0
    with torch.no_grad():
        for wave, label in loader:
            hits += (model(wave.to(device)).argmax(dim=1).cpu() == label).sum().item()
            n += len(label)
    return hits / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="speech_commands_1s.npz")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--dropout", type=float, default=0.1)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = np.load(args.data)
    splits = {name: TensorDataset(torch.from_numpy(data[f"{name}_wave"]).float(), torch.from_numpy(data[f"{name}_label"]).long()) for name in ("train", "valid", "test")}
    train_loader = DataLoader(splits["train"], batch_size=100, shuffle=True, drop_last=True)
    valid_loader = DataLoader(splits["valid"], batch_size=500)
    test_loader = DataLoader(splits["test"], batch_size=500)
    model = KeywordTCN(len(KEYWORDS), dropout=args.dropout).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    for epoch in range(args.epochs):
        model.train()
        for wave, label in train_loader:
            loss = F.cross_entropy(model(wave.to(device)), label.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        print(f"epoch {epoch}: valid acc {accuracy(model, valid_loader, device):.4f}")
    print(f"test acc {accuracy(model, test_loader, device):.4f}")
    torch.save(model.state_dict(), "kws_tcn.pt")


if __name__ == "__main__":
    main()
