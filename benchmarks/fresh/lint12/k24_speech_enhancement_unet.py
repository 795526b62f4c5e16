"""Speech enhancement on VoiceBank-DEMAND (16 kHz): a U-Net predicts a magnitude mask on the
STFT (512-point, hop 128); the noisy phase is kept for resynthesis.

    python train_se.py --root data/voicebank_demand_16k --epochs 50
"""
import argparse
import wave
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

N_FFT, HOP = 512, 128


def read_wav(path):
    with wave.open(str(path)) as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    return torch.from_numpy(pcm.astype(np.float32) / 32768.0)


class NoisyClean(Dataset):
    def __init__(self, root, split, segment):
        self.noisy = sorted((root / f"noisy_{split}").glob("*.wav"))
        self.clean_dir, self.segment = root / f"clean_{split}", segment

    def __len__(self):
        return len(self.noisy)

    def __getitem__(self, i):
        noisy, clean = read_wav(self.noisy[i]), read_wav(self.clean_dir / self.noisy[i].name)
        if self.segment:
            if len(noisy) < self.segment:
                pad = self.segment - len(noisy)
                noisy, clean = F.pad(noisy, (0, pad)), F.pad(clean, (0, pad))
            start = int(torch.randint(0, len(noisy) - self.segment + 1, ()))
            noisy, clean = noisy[start:start + self.segment], clean[start:start + self.segment]
        return noisy, clean


def stft(x):
    return torch.stft(x, N_FFT, HOP, window=torch.hann_window(N_FFT, device=x.device), return_complex=True)


def istft(spec, length):
    return torch.istft(spec, N_FFT, HOP, window=torch.hann_window(N_FFT, device=spec.device), length=length)


def conv_bn(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ELU())


def match_size(x, ref):
    dh, dw = ref.size(-2) - x.size(-2), ref.size(-1) - x.size(-1)
    return F.pad(x, [0, dw, 0, dh])


class MaskUNet(nn.Module):
    def __init__(self, widths=(16, 32, 64, 128)):
        super().__init__()
        self.inp = conv_bn(1, widths[0], 1)
        self.downs = nn.ModuleList(conv_bn(widths[i], widths[i + 1], 2) for i in range(len(widths) - 1))
        self.ups = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 3, stride=2, padding=1)
                                 for i in range(len(widths) - 1))
        self.fuse = nn.ModuleList(conv_bn(2 * widths[i], widths[i], 1) for i in range(len(widths) - 1))
        self.out = nn.Conv2d(widths[0], 1, 1)

    def forward(self, log_mag):
        skips = [self.inp(log_mag)]
        for down in self.downs:
            skips.append(down(skips[-1]))
        h = skips.pop()
        for i in reversed(range(len(self.ups))):
            skip = skips.pop()
            h = self.fuse[i](torch.cat([match_size(self.ups[i](h), skip), skip], dim=1))
        return torch.sigmoid(self.out(h))


def enhance(model, noisy):
    spec = stft(noisy)
    mag = spec.abs()
    mask = model(torch.log1p(mag).unsqueeze(1)).squeeze(1)
    return mask * mag, spec


def snr_db(est, ref):
    return 10 * torch.log10(ref.pow(2).sum(-1) / (ref - est).pow(2).sum(-1).clamp_min(1e-10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("data/voicebank_demand_16k"))
    ap.add_argument("--segment", type=int, default=32640)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--lr", type=float, default=5e-4)
    args = ap.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(NoisyClean(args.root, "trainset_28spk", args.segment), batch_size=16,
                          shuffle=True, drop_last=True, num_workers=6)
    test_dl = DataLoader(NoisyClean(args.root, "testset", None), batch_size=1)

    model = MaskUNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.5)
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for noisy, clean in train_dl:
            noisy, clean = noisy.to(device), clean.to(device)
            est_mag, _ = enhance(model, noisy)
            loss = F.l1_loss(torch.log1p(est_mag), torch.log1p(stft(clean).abs()))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        scheduler.step()

        model.eval()
        gains = []
        with torch.no_grad():
            for noisy, clean in test_dl:
                noisy, clean = noisy.to(device), clean.to(device)
                est_mag, spec = enhance(model, noisy)
                est = istft(torch.polar(est_mag, spec.angle()), noisy.size(-1))
                gains.append((snr_db(est, clean) - snr_db(noisy, clean)).item())
        print(f"epoch {epoch:2d} train L1 {total / len(train_dl):.4f} test SNR gain {np.mean(gains):.2f} dB")
        torch.save(model.state_dict(), "se_unet.pt")


if __name__ == "__main__":
    main()
