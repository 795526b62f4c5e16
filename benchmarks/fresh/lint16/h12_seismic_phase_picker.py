"""P/S phase picking on 3-component seismograms with a 1-D U-Net, logged to TensorBoard."""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter


class PickDataset(Dataset):
    def __init__(self, npz_path, sigma=20, window=3000, train=True):
        data = np.load(npz_path)
        self.waves = data["waves"].astype(np.float32)
        self.p_idx = data["p_idx"].astype(np.int64)
        self.s_idx = data["s_idx"].astype(np.int64)
        self.sigma, self.window, self.train = sigma, window, train

    def __len__(self):
        return len(self.waves)

    def _target(self, center, length):
        t = torch.arange(length, dtype=torch.float32)
        return torch.exp(-0.5 * ((t - center) / self.sigma) ** 2)

    def __getitem__(self, i):
        wave = torch.from_numpy(self.waves[i])
        length = wave.shape[1]
        start = 0
        if self.train and length > self.window:
            start = int(torch.randint(0, length - self.window + 1, ()))
        wave = wave[:, start:start + self.window]
        wave = wave - wave.mean(dim=1, keepdim=True)
        wave = wave / wave.abs().amax().clamp_min(1e-6)
        p = self._target(self.p_idx[i] - start, wave.shape[1])
        s = self._target(self.s_idx[i] - start, wave.shape[1])
        noise = (1 - p - s).clamp_min(0)
        return wave, torch.stack([noise, p, s])


def down(cin, cout):
    return nn.Sequential(nn.Conv1d(cin, cout, 7, padding=3, bias=False), nn.BatchNorm1d(cout), nn.ReLU())


class PhaseNet1D(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.channel_gain = torch.ones(3, 1, requires_grad=True)
        self.enc1, self.enc2, self.enc3 = down(3, width), down(width, 2 * width), down(2 * width, 4 * width)
        self.dec2, self.dec1 = down(6 * width, 2 * width), down(3 * width, width)
        self.out = nn.Conv1d(width, 3, 1)

    def forward(self, x):
        x = x * self.channel_gain
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool1d(e1, 2))
        e3 = self.enc3(F.max_pool1d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(e3, size=e2.shape[-1]), e2], dim=1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, size=e1.shape[-1]), e1], dim=1))
        return self.out(d1)


def pick_error(logits, target, fs=100.0):
    pred = logits.argmax(dim=-1)[:, 1:]
    true = target.argmax(dim=-1)[:, 1:]
    return ((pred - true).abs().float() / fs).mean(dim=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/stead/train.npz")
    ap.add_argument("--val", default="data/stead/val.npz")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--logdir", default="runs/phasenet")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = PickDataset(args.train)
    val_ds = PickDataset(args.val, train=False)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=args.batch_size)

    model = PhaseNet1D().to(device)
    optimizer = torch.optim.Adam(list(model.parameters()) + [model.channel_gain], lr=args.lr)
    writer = SummaryWriter(args.logdir)
    try:
        example, _ = next(iter(val_dl))
        writer.add_graph(model, example[:2].to(device))
        for epoch in range(args.epochs):
            model.train()
            total = 0.0
            for wave, target in train_dl:
                wave, target = wave.to(device), target.to(device)
                optimizer.zero_grad()
                loss = -(target * F.log_softmax(model(wave), dim=1)).sum(dim=1).mean()
                loss.backward()
                optimizer.step()
                total += loss.item()
            model.eval()
            errs = []
            with torch.no_grad():
                for wave, target in val_dl:
                    errs.append(pick_error(model(wave.to(device)).cpu(), target))
            p_err, s_err = torch.stack(errs).mean(dim=0).tolist()
            writer.add_scalar("train/loss", total / len(train_dl), epoch)
            writer.add_scalar("val/p_error_s", p_err, epoch)
            writer.add_scalar("val/s_error_s", s_err, epoch)
            print(f"epoch {epoch}: loss {total / len(train_dl):.4f}  P err {p_err:.3f}s  S err {s_err:.3f}s")
        torch.save({"model": model.state_dict(), "gain": model.channel_gain.detach().cpu()},
                   os.path.join(args.logdir, "phasenet.pt"))
    finally:
        writer.close()


if __name__ == "__main__":
    main()
