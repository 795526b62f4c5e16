"""Low-latency speech denoiser for hearing aids: predicts a gain per STFT bin from a
mel-weighted log spectrum, trained on synthetic speech + noise mixtures.
"""
import argparse
import math
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SAMPLE_RATE = 16000
N_FFT, HOP = 256, 64


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


class Mixtures(Dataset):
    def __init__(self, speech, noise, seconds, snr_range, length):
        self.speech, self.noise = speech, noise
        self.samples = int(seconds * SAMPLE_RATE)
        self.snr_range = snr_range
        self.length = length

    def __len__(self):
        return self.length

    def crop(self, wave, g):
        start = torch.randint(0, wave.numel() - self.samples + 1, (1,), generator=g).item()
        return wave[start:start + self.samples]

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        clean = self.crop(self.speech[i % len(self.speech)], g)
        noise = self.crop(self.noise[torch.randint(len(self.noise), (1,), generator=g).item()], g)
        snr = torch.empty(1).uniform_(*self.snr_range, generator=g)
        scale = clean.norm() / (noise.norm() * 10 ** (snr / 20) + 1e-8)
        return clean + scale * noise, clean


class GainNet(nn.Module):
    def __init__(self, n_bins, hidden=192):
        super().__init__()
        self.gru = nn.GRU(n_bins, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, n_bins)

    def forward(self, feats):
        h, _ = self.gru(feats)
        return torch.sigmoid(self.out(h))


class Frontend(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.register_buffer("window", torch.hann_window(N_FFT, device=device))
        freqs = torch.linspace(0.0, SAMPLE_RATE / 2, N_FFT // 2 + 1, device=device)
        mel = freqs.clone().apply_(hz_to_mel)
        self.register_buffer("band_weight", (mel.diff(prepend=mel[:1]) + 1.0).log())

    def spec(self, wave):
        return torch.stft(wave, N_FFT, HOP, window=self.window, return_complex=True)

    def features(self, spec):
        logmag = torch.log1p(spec.abs())
        return (logmag * self.band_weight[:, None]).transpose(1, 2)

    def inverse(self, spec, length):
        return torch.istft(spec, N_FFT, HOP, window=self.window, length=length)


def si_snr(est, ref, eps=1e-8):
    ref = ref - ref.mean(-1, keepdim=True)
    est = est - est.mean(-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) / (ref.pow(2).sum(-1, keepdim=True) + eps) * ref
    noise = est - proj
    return 10 * torch.log10(proj.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


def enhance(model, frontend, noisy):
    spec = frontend.spec(noisy)
    gain = model(frontend.features(spec)).transpose(1, 2)
    return frontend.inverse(spec * gain, noisy.shape[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--speech", default="data/speech_16k.pt")
    ap.add_argument("--noise", default="data/noise_16k.pt")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--steps-per-epoch", type=int, default=500)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="runs/denoiser")
    args = ap.parse_args(argv)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    speech = torch.load(args.speech, weights_only=True)
    noise = torch.load(args.noise, weights_only=True)
    n_valid = max(1, len(speech) // 10)
    train_set = Mixtures(speech[n_valid:], noise, 2.0, (-5.0, 15.0), args.steps_per_epoch * args.batch_size)
    valid_set = Mixtures(speech[:n_valid], noise, 4.0, (0.0, 0.0), 64)
    train_dl = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    valid_dl = DataLoader(valid_set, batch_size=16)

    frontend = Frontend(device)
    model = GainNet(N_FFT // 2 + 1).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for epoch in range(args.epochs):
        model.train()
        for noisy, clean in train_dl:
            noisy, clean = noisy.to(device), clean.to(device)
            loss = -si_snr(enhance(model, frontend, noisy), clean).mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 3.0)
            optimizer.step()
        model.eval()
        with torch.no_grad():
            gains = torch.cat([si_snr(enhance(model, frontend, n.to(device)), c.to(device))
                               - si_snr(n.to(device), c.to(device)) for n, c in valid_dl])
        print(f"epoch {epoch}: SI-SNR improvement {gains.mean().item():.2f} dB")
        torch.save(model.state_dict(), out / "gainnet.pt")


if __name__ == "__main__":
    main()
