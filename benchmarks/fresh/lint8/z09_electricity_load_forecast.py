"""Day-ahead electricity load forecasting for one balancing area (hourly data, LSTM).

Long runs are preempted on the shared queue, so the script checkpoints every epoch and can resume.
"""
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    csv: str = "data/ercot_hourly_load.csv"
    history: int = 168
    horizon: int = 24
    hidden: int = 128
    layers: int = 2
    batch_size: int = 256
    epochs: int = 60
    lr: float = 1e-3
    huber_delta: float = 0.5
    clip: float = 1.0
    checkpoint: str = "runs/load_lstm/last.pt"
    resume: Optional[str] = None


FEATURES = ["load_mw", "temp_c", "hour_sin", "hour_cos", "dow_sin", "dow_cos", "holiday"]


def add_calendar(df):
    ts = pd.to_datetime(df["timestamp"])
    df["hour_sin"], df["hour_cos"] = np.sin(2 * np.pi * ts.dt.hour / 24), np.cos(2 * np.pi * ts.dt.hour / 24)
    df["dow_sin"], df["dow_cos"] = np.sin(2 * np.pi * ts.dt.dayofweek / 7), np.cos(2 * np.pi * ts.dt.dayofweek / 7)
    return df


class LoadWindows(Dataset):
    """Past `history` hours of features -> load `horizon` hours after the window ends."""

    def __init__(self, values, target, cfg):
        self.x = torch.as_tensor(values, dtype=torch.float32)
        self.y = torch.as_tensor(target, dtype=torch.float32)
        self.history, self.horizon = cfg.history, cfg.horizon

    def __len__(self):
        return len(self.x) - self.history - self.horizon + 1

    def __getitem__(self, i):
        end = i + self.history
        return self.x[i:end], self.y[end + self.horizon - 1]


class LoadLSTM(nn.Module):
    def __init__(self, n_features, cfg):
        super().__init__()
        self.lstm = nn.LSTM(n_features, cfg.hidden, num_layers=cfg.layers, batch_first=True, dropout=0.1)
        self.proj = nn.Linear(cfg.hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.proj(out[:, -1])


def restore(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    return state["epoch"] + 1, state["best_val"]


def run_epoch(model, loader, criterion, device, opt=None, clip=None):
    model.train(opt is not None)
    total, seen = 0.0, 0
    with torch.set_grad_enabled(opt is not None):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            if opt is not None:
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), clip)
                opt.step()
            total += loss.item() * x.size(0)
            seen += x.size(0)
    return total / seen


def main(cfg=Config()):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    df = add_calendar(pd.read_csv(cfg.csv)).ffill()
    split = int(len(df) * 0.8)
    values = df[FEATURES].to_numpy(dtype=np.float32)
    mean, std = values[:split].mean(axis=0), values[:split].std(axis=0) + 1e-6
    values = (values - mean) / std
    target = values[:, 0]
    train_ds = LoadWindows(values[:split], target[:split], cfg)
    val_ds = LoadWindows(values[split - cfg.history:], target[split - cfg.history:], cfg)
    train_dl = DataLoader(train_ds, batch_size=cfg.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=1024)

    model = LoadLSTM(len(FEATURES), cfg).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    criterion = nn.HuberLoss(delta=cfg.huber_delta)
    start_epoch, best_val = 0, float("inf")
    if cfg.resume:
        start_epoch, best_val = restore(model, cfg.resume)
    os.makedirs(os.path.dirname(cfg.checkpoint), exist_ok=True)
    for epoch in range(start_epoch, cfg.epochs):
        train_loss = run_epoch(model, train_dl, criterion, device, opt, cfg.clip)
        val_loss = run_epoch(model, val_dl, criterion, device)
        best_val = min(best_val, val_loss)
        print(f"epoch {epoch:2d}  train {train_loss:.4f}  val {val_loss:.4f}  best {best_val:.4f}")
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch,
                    "best_val": best_val}, cfg.checkpoint)


if __name__ == "__main__":
    main()
