"""Precipitation nowcasting: predict the next 5-minute radar reflectivity frame from the last four.

Frames are 256x256 uint8 composites (dBZ scaled to 0-255) stored per day as .npy stacks.
Half precision halves activation memory, which lets the full-resolution model fit on a 12 GB card.
"""
import argparse
import glob

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train-glob", default="data/radar/2019*.npy")
    p.add_argument("--val-glob", default="data/radar/2020*.npy")
    p.add_argument("--context", type=int, default=4)
    p.add_argument("--epochs", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--smooth-weight", type=float, default=1e-4)
    p.add_argument("--precision", choices=["fp32", "fp16"], default="fp16")
    return p.parse_args()


class RadarSequences(Dataset):
    def __init__(self, files, context):
        self.days = [np.load(f, mmap_mode="r") for f in files]
        self.index = [(d, t) for d, day in enumerate(self.days) for t in range(len(day) - context)]
        self.context = context

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        d, t = self.index[i]
        frames = torch.from_numpy(np.array(self.days[d][t:t + self.context + 1], dtype=np.float32)) / 255.0
        return frames[:-1], frames[-1:]


def conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.GroupNorm(8, cout), nn.SiLU())


class NowcastNet(nn.Module):
    def __init__(self, context, w=64):
        super().__init__()
        self.enc1, self.enc2, self.enc3 = conv(context, w), conv(w, 2 * w), conv(2 * w, 4 * w)
        self.dec2, self.dec1 = conv(6 * w, 2 * w), conv(3 * w, w)
        self.out = nn.Conv2d(w, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.avg_pool2d(e1, 2))
        e3 = self.enc3(F.avg_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(e3, scale_factor=2.0, mode="nearest"), e2], dim=1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2.0, mode="nearest"), e1], dim=1))
        return torch.sigmoid(self.out(d1))


def smoothness(pred):
    dy = (pred[..., 1:, :] - pred[..., :-1, :]).abs().mean()
    dx = (pred[..., :, 1:] - pred[..., :, :-1]).abs().mean()
    return dx + dy


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.float16 if args.precision == "fp16" else torch.float32
    train_ds = RadarSequences(sorted(glob.glob(args.train_glob)), args.context)
    val_ds = RadarSequences(sorted(glob.glob(args.val_glob)), args.context)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=32, num_workers=4)

    model = NowcastNet(args.context).to(device=device, dtype=dtype)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        model.train()
        total, seen = 0.0, 0
        for past, future in train_dl:
            past, future = past.to(device, dtype), future.to(device, dtype)
            pred = model(past)
            loss = F.mse_loss(pred, future) + args.smooth_weight * smoothness(pred)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * past.size(0)
            seen += past.size(0)

        model.eval()
        err, n = 0.0, 0
        with torch.no_grad():
            for past, future in val_dl:
                pred = model(past.to(device, dtype)).float()
                err += F.mse_loss(pred, future.to(device), reduction="sum").item()
                n += future.numel()
        print(f"epoch {epoch:2d}  train {total / seen:.5f}  val rmse {np.sqrt(err / n) * 255:.2f} (0-255 units)")
        torch.save(model.state_dict(), f"nowcast_{args.precision}.pt")


if __name__ == "__main__":
    main()
