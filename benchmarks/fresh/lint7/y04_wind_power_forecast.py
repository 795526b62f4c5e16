"""Day-ahead wind farm power forecast from SCADA + NWP features.

A GRU reads the last 48 hourly rows and predicts the normalised power 24 h ahead.
Supports --resume for the preemptible queue.
"""
import argparse
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

FEATURES = ["wind_speed_100m", "wind_dir_sin", "wind_dir_cos", "temp_2m", "pressure", "power"]
TARGET = "power"


class WindowDataset(Dataset):
    def __init__(self, frame, mean, std, history=48, horizon=24):
        values = ((frame[FEATURES] - mean) / std).to_numpy(np.float32)
        self.x = torch.from_numpy(values)
        self.y = torch.from_numpy(values[:, FEATURES.index(TARGET)].copy())
        self.history, self.horizon = history, horizon

    def __len__(self):
        return len(self.x) - self.history - self.horizon + 1

    def __getitem__(self, i):
        window = self.x[i : i + self.history]
        target = self.y[i + self.history + self.horizon - 1]
        return window, target


class PowerGRU(nn.Module):
    def __init__(self, n_features, hidden=128, layers=2):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden, num_layers=layers, batch_first=True, dropout=0.1)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        _, h = self.gru(x)
        return self.out(h[-1])


def forecast_loss(pred, target):
    return F.mse_loss(pred, target)


def save_checkpoint(path, model, optimizer, epoch, best):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": epoch, "best": best}, path)


def load_checkpoint(path, model, optimizer):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1, ckpt["best"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/farm_07_hourly.csv")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--ckpt", default="checkpoints/wind_gru_last.pt")
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()

    df = pd.read_csv(args.csv, parse_dates=["timestamp"]).sort_values("timestamp")
    cut = int(len(df) * 0.8)
    train_df, val_df = df.iloc[:cut], df.iloc[cut:]
    mean, std = train_df[FEATURES].mean(), train_df[FEATURES].std()

    train_dl = DataLoader(WindowDataset(train_df, mean, std), batch_size=64, shuffle=True, drop_last=True)
    val_dl = DataLoader(WindowDataset(val_df, mean, std), batch_size=256)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = PowerGRU(len(FEATURES)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-5)

    start_epoch, best = 0, float("inf")
    if args.resume and os.path.exists(args.ckpt):
        start_epoch, best = load_checkpoint(args.ckpt, model, optimizer)
        print(f"resumed at epoch {start_epoch}, best val {best:.4f}")

    for epoch in range(start_epoch, args.epochs):
        model.train()
        for xb, yb in train_dl:
            xb, yb = xb.to(device), yb.to(device)
            loss = forecast_loss(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        scheduler.step()

        model.eval()
        err, n = 0.0, 0
        with torch.no_grad():
            for xb, yb in val_dl:
                xb, yb = xb.to(device), yb.to(device)
                err += forecast_loss(model(xb), yb).item() * len(yb)
                n += len(yb)
        val = err / n
        best = min(best, val)
        os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
        save_checkpoint(args.ckpt, model, optimizer, epoch, best)
        print(f"epoch {epoch:02d} lr {scheduler.get_last_lr()[0]:.2e} val mse {val:.4f}")


if __name__ == "__main__":
    main()
