"""Keyword spotting (12 commands): log-mel front end, a small CNN and a label-smoothed loss."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

KEYWORDS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go", "_silence_", "_unknown_"]


def hz_to_mel(hz):
    return 2595.0 * math.log10(1.0 + hz / 700.0)


def mel_filterbank(sample_rate, n_fft, n_mels, f_min=20.0, f_max=None):
    f_max = f_max or sample_rate / 2
    n_freq = n_fft // 2 + 1
    mel_points = torch.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2)
    hz_points = 700.0 * (10.0 ** (mel_points / 2595.0) - 1.0)
    freqs = torch.linspace(0.0, sample_rate / 2, n_freq)
    lower, centre, upper = hz_points[:-2, None], hz_points[1:-1, None], hz_points[2:, None]
    rising = (freqs - lower) / (centre - lower)
    falling = (upper - freqs) / (upper - centre)
    return torch.clamp(torch.minimum(rising, falling), min=0.0).t()  # (n_freq, n_mels)


class LogMel(nn.Module):
    def __init__(self, sample_rate=16000, n_fft=480, hop=160, n_mels=40):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fbank", mel_filterbank(sample_rate, n_fft, n_mels))

    def forward(self, wav):  # (batch, samples)
        spec = torch.stft(wav, self.n_fft, hop_length=self.hop, window=self.window)
        power = spec.pow(2).sum(-1)  # (batch, freq, frames)
        mel = power.transpose(1, 2) @ self.fbank  # (batch, frames, mels)
        return torch.log(mel + 1e-6).unsqueeze(1)


def block(cin, cout, pool):
    layers = [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
    if pool:
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers)


class KWSNet(nn.Module):
    def __init__(self, n_classes=len(KEYWORDS)):
        super().__init__()
        self.frontend = LogMel()
        self.body = nn.Sequential(block(1, 32, True), block(32, 64, True), block(64, 128, False))
        self.classifier = nn.Linear(128, n_classes)

    def forward(self, wav):
        feats = self.frontend(wav)
        feats = (feats - feats.mean(dim=(2, 3), keepdim=True)) / (feats.std(dim=(2, 3), keepdim=True) + 1e-5)
        h = self.body(feats)
        return self.classifier(h.mean(dim=(2, 3)))


def smoothed_nll(logits, target, smoothing=0.1):
    n_classes = logits.size(-1)
    log_probs = torch.log(F.softmax(logits, dim=-1))
    with torch.no_grad():
        soft = torch.full_like(log_probs, smoothing / (n_classes - 1))
        soft.scatter_(1, target.unsqueeze(1), 1.0 - smoothing)
    return (-soft * log_probs).sum(dim=-1).mean()


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    total, count = 0.0, 0
    for wav, label in loader:
        wav, label = wav.to(device, non_blocking=True), label.to(device, non_blocking=True)
        loss = smoothed_nll(model(wav), label)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += loss.item() * label.size(0)
        count += label.size(0)
    return total / count


@torch.no_grad()
def predict(model, wav):
    model.eval()
    probs = F.softmax(model(wav), dim=-1)
    conf, idx = probs.max(dim=-1)
    return [(KEYWORDS[i], c) for i, c in zip(idx.tolist(), conf.tolist())]


if __name__ == "__main__":
    net = KWSNet()
    clip = torch.randn(4, 16000)
    print(net(clip).shape)
    print(predict(net, clip))
