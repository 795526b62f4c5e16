"""A small VQ-VAE speech codec (16 kHz, 320x downsampling) trained with mixed precision."""
import argparse
import glob
import os
import random
import wave

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import custom_bwd, custom_fwd
from torch.utils.data import DataLoader, Dataset


class SpeechChunks(Dataset):
    def __init__(self, folder, seconds=1.0, sr=16000):
        self.files = sorted(glob.glob(os.path.join(folder, "*.wav")))
        self.length = int(seconds * sr)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        with wave.open(self.files[i], "rb") as wf:
            pcm = np.frombuffer(wf.readframes(wf.getnframes()), dtype=np.int16)
        x = torch.from_numpy(pcm.astype(np.float32) / 32768.0)
        if x.numel() < self.length:
            x = F.pad(x, (0, self.length - x.numel()))
        start = int(torch.randint(0, x.numel() - self.length + 1, ()))
        return x[start: start + self.length].unsqueeze(0)


class NearestCode(torch.autograd.Function):
    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, z, codebook):
        flat = z.permute(0, 2, 1).reshape(-1, z.size(1))
        dist = (flat.pow(2).sum(1, keepdim=True) - 2 * flat @ codebook.T + codebook.pow(2).sum(1)[None])
        idx = dist.argmin(dim=1)
        q = codebook[idx].view(z.size(0), z.size(2), z.size(1)).permute(0, 2, 1).contiguous()
        ctx.mark_non_differentiable(idx)
        return q, idx

    @staticmethod
    @custom_bwd
    def backward(ctx, grad_q, grad_idx):
        return grad_q, None


class Codec(nn.Module):
    def __init__(self, dim=64, codes=512):
        super().__init__()
        chans = [1, 32, 64, 128, dim]
        strides = [4, 8, 10]
        enc = []
        for cin, cout, s in zip(chans[:-2], chans[1:-1], strides):
            enc += [nn.Conv1d(cin, cout, 2 * s, stride=s, padding=s // 2), nn.ELU()]
        self.encoder = nn.Sequential(*enc, nn.Conv1d(chans[-2], dim, 3, padding=1))
        dec = [nn.Conv1d(dim, chans[-2], 3, padding=1), nn.ELU()]
        for cin, cout, s in [(128, 64, 10), (64, 32, 8), (32, 32, 4)]:
            dec += [nn.ConvTranspose1d(cin, cout, 2 * s, stride=s, padding=s // 2), nn.ELU()]
        self.decoder = nn.Sequential(*dec, nn.Conv1d(chans[1], 1, 7, padding=3), nn.Tanh())
        self.codebook = nn.Parameter(torch.randn(codes, dim) * 0.1)

    def forward(self, x):
        z = self.encoder(x)
        q, idx = NearestCode.apply(z, self.codebook)
        codebook_loss = F.mse_loss(self.codebook[idx], z.detach().permute(0, 2, 1).reshape(-1, z.size(1)))
        commit_loss = F.mse_loss(z, q.detach())
        y = self.decoder(q)[..., : x.size(-1)]
        return y, codebook_loss, commit_loss, idx


def multi_res_stft_loss(y, x, ffts=(256, 512, 1024)):
    loss = 0.0
    for n in ffts:
        w = torch.hann_window(n, device=x.device)
        sy = torch.stft(y.squeeze(1), n, n // 4, window=w, return_complex=True).abs()
        sx = torch.stft(x.squeeze(1), n, n // 4, window=w, return_complex=True).abs()
        loss = loss + F.l1_loss(torch.log(sy + 1e-5), torch.log(sx + 1e-5))
    return loss / len(ffts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/librispeech_16k/train")
    ap.add_argument("--steps", type=int, default=200000)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--beta", type=float, default=0.25)
    ap.add_argument("--out", default="checkpoints/vq_codec.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = device.type == "cuda"
    loader = DataLoader(SpeechChunks(args.data), batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = Codec().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.8, 0.99))
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    step = 0
    while step < args.steps:
        for x in loader:
            x = x.to(device)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                y, cb_loss, commit, idx = model(x)
                recon = F.l1_loss(y, x) + multi_res_stft_loss(y.float(), x)
                loss = recon + cb_loss + args.beta * commit
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            if step % 500 == 0:
                usage = torch.bincount(idx, minlength=model.codebook.size(0)).gt(0).float().mean().item()
                print(f"step {step}: recon {recon.item():.4f}  codebook usage {usage:.2%}")
            step += 1
            if step >= args.steps:
                break
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
