"""Unsupervised bearing-fault detection from vibration windows (1-D convolutional autoencoder).

Trains on windows from healthy runs only, then sets the alarm threshold at a high percentile
of the reconstruction error on held-out healthy windows, and reports detection on the test
runs (healthy + inner race / outer race / ball faults).

    python s08_bearing_anomaly_autoencoder.py --data data/cwru_windows.npz --epochs 80 [--resume]
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/cwru_windows.npz")
    p.add_argument("--workdir", default="runs/bearing_ae")
    p.add_argument("--epochs", type=int, default=80)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--percentile", type=float, default=99.5)
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


def down(c_in, c_out):
    return nn.Sequential(nn.Conv1d(c_in, c_out, 9, stride=2, padding=4, bias=False),
                         nn.BatchNorm1d(c_out), nn.LeakyReLU(0.1))


def up(c_in, c_out):
    return nn.Sequential(nn.ConvTranspose1d(c_in, c_out, 8, stride=2, padding=3, bias=False),
                         nn.BatchNorm1d(c_out), nn.LeakyReLU(0.1))


class VibrationAE(nn.Module):
    def __init__(self, channels=(16, 32, 64, 64)):
        super().__init__()
        c = (1,) + tuple(channels)
        self.encoder = nn.Sequential(*[down(a, b) for a, b in zip(c[:-1], c[1:])])
        rev = c[::-1]
        self.decoder = nn.Sequential(*[up(a, b) for a, b in zip(rev[:-2], rev[1:-1])])
        self.out = nn.ConvTranspose1d(rev[-2], 1, 8, stride=2, padding=3)

    def forward(self, x):
        return self.out(self.decoder(self.encoder(x)))


def window_errors(model, loader, device):
    errors = []
    with torch.no_grad():
        for (x,) in loader:
            x = x.to(device)
            errors.append(F.mse_loss(model(x), x, reduction="none").mean(dim=(1, 2)).cpu())
    return torch.cat(errors)


def save_checkpoint(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)


def main():
    args = parse_args()
    torch.manual_seed(0)
    os.makedirs(args.workdir, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    d = np.load(args.data)
    scale = float(np.abs(d["healthy_train"]).max())

    def as_set(arr):
        return TensorDataset(torch.from_numpy((arr / scale).astype(np.float32)).unsqueeze(1))

    train_loader = DataLoader(as_set(d["healthy_train"]), batch_size=args.batch_size, shuffle=True, drop_last=True)
    calib_loader = DataLoader(as_set(d["healthy_calib"]), batch_size=256)
    test_loader = DataLoader(as_set(d["test_windows"]), batch_size=256)
    test_labels = torch.from_numpy(d["test_labels"]).bool()  # True: faulty run

    model = VibrationAE().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-5)
    ckpt_path = os.path.join(args.workdir, "last.pt")

    start_epoch = 0
    if args.resume and os.path.exists(ckpt_path):
        ckpt = torch.load(ckpt_path, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1
        print(f"resuming from epoch {start_epoch}")

    for epoch in range(start_epoch, args.epochs):
        model.train()
        total, n = 0.0, 0
        for (x,) in train_loader:
            x = x.to(device)
            loss = F.mse_loss(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * x.size(0)
            n += x.size(0)
        scheduler.step()
        save_checkpoint(ckpt_path, model, optimizer, epoch)
        if epoch % 5 == 0 or epoch == args.epochs - 1:
            print(f"epoch {epoch:3d}  recon {total / n:.5f}  lr {scheduler.get_last_lr()[0]:.2e}")

    calib = window_errors(model, calib_loader, device)
    threshold = float(np.percentile(calib.numpy(), args.percentile))
    torch.save({"model": model.state_dict(), "threshold": threshold, "scale": scale},
               os.path.join(args.workdir, "detector.pt"))

    model.eval()
    test_err = window_errors(model, test_loader, device)
    alarm = test_err > threshold
    tp = (alarm & test_labels).sum().item()
    fp = (alarm & ~test_labels).sum().item()
    fn = (~alarm & test_labels).sum().item()
    precision = tp / max(tp + fp, 1)
    recall = tp / max(tp + fn, 1)
    report = {"threshold": threshold, "precision": precision, "recall": recall,
              "false_alarm_rate": fp / max(int((~test_labels).sum()), 1)}
    print(json.dumps(report, indent=2))
    with open(os.path.join(args.workdir, "report.json"), "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
