"""Generator pre-training for a mel-to-waveform vocoder (Parallel WaveGAN stage 1: STFT losses only).

Mixed precision to fit 8 s segments on one 24 GB card.
"""

import argparse
import logging
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from vocoder.data import MelWaveSegments  # (mel: 80 x frames, wave: frames * 256)

log = logging.getLogger("vocoder")
HOP = 256


class ResStack(nn.Module):
    def __init__(self, ch, dilations=(1, 3, 9, 27)):
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Sequential(nn.LeakyReLU(0.2), nn.Conv1d(ch, ch, 3, dilation=d, padding=d), nn.LeakyReLU(0.2),
                          nn.Conv1d(ch, ch, 1))
            for d in dilations
        )

    def forward(self, x):
        for conv in self.convs:
            x = x + conv(x)
        return x


class Generator(nn.Module):
    def __init__(self, n_mels=80, ch=512, ups=(8, 8, 2, 2)):
        super().__init__()
        layers = [nn.Conv1d(n_mels, ch, 7, padding=3)]
        for r in ups:
            layers += [nn.LeakyReLU(0.2), nn.ConvTranspose1d(ch, ch // 2, 2 * r, stride=r, padding=r // 2),
                       ResStack(ch // 2)]
            ch //= 2
        layers += [nn.LeakyReLU(0.2), nn.Conv1d(ch, 1, 7, padding=3), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def forward(self, mel):
        return self.net(mel).squeeze(1)


def stft_mag(x, n_fft, hop, win):
    window = torch.hann_window(win, device=x.device)
    spec = torch.stft(x.float(), n_fft, hop, win, window=window, return_complex=True)
    return spec.abs().clamp(min=1e-7)


def multi_resolution_stft_loss(fake, real, resolutions=((1024, 120, 600), (2048, 240, 1200), (512, 50, 240))):
    sc = mag = 0.0
    for n_fft, hop, win in resolutions:
        f, r = stft_mag(fake, n_fft, hop, win), stft_mag(real, n_fft, hop, win)
        sc = sc + torch.linalg.norm(r - f) / torch.linalg.norm(r)
        mag = mag + F.l1_loss(f.log(), r.log())
    return (sc + mag) / len(resolutions)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/ljspeech_feats")
    ap.add_argument("--steps", type=int, default=400_000)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--ckpt-dir", default="ckpt/vocoder")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda")
    os.makedirs(args.ckpt_dir, exist_ok=True)

    loader = DataLoader(MelWaveSegments(args.data, seconds=8.0), args.bs, shuffle=True, num_workers=8,
                        drop_last=True, persistent_workers=True)
    gen = Generator().to(device)
    opt = torch.optim.Adam(gen.parameters(), lr=args.lr, betas=(0.5, 0.9), eps=1e-6)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=200_000, gamma=0.5)

    step = 0
    while step < args.steps:
        for mel, wave in loader:
            mel, wave = mel.to(device, non_blocking=True), wave.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                fake = gen(mel)
            loss = multi_resolution_stft_loss(fake, wave)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(gen.parameters(), 10.0)
            opt.step()
            sched.step()
            step += 1
            if step % 500 == 0:
                log.info("step %d stft loss %.4f lr %.2e", step, loss.item(), sched.get_last_lr()[0])
            if step % 20_000 == 0:
                torch.save({"gen": gen.state_dict(), "opt": opt.state_dict(), "step": step},
                           os.path.join(args.ckpt_dir, f"gen_{step:07d}.pt"))
            if step >= args.steps:
                break


if __name__ == "__main__":
    main()
