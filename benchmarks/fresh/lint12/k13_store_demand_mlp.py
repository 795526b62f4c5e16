"""Next-day unit sales per (store, item) from lag and calendar features, M5-style.

features.parquet is produced by make_features.py: one row per (store, item, day) with the
columns in FEATURE_COLS plus `sales` (the target) and `d` (day number).
"""
import math

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FEATURE_COLS = [
    "lag_7", "lag_14", "lag_28", "rmean_7_7", "rmean_28_7", "rstd_28_7",
    "sell_price", "price_change", "snap", "event", "dow_sin", "dow_cos", "month_sin", "month_cos",
]

CFG = {
    "path": "data/m5/features.parquet",
    "valid_days": 28,
    "hidden": [256, 128],
    "dropout": 0.1,
    "batch_size": 4096,
    "epochs": 15,
    "lr": 2e-3,
}


class SalesRows(Dataset):
    def __init__(self, frame, stats):
        mean, std = stats
        self.matrix = ((frame[FEATURE_COLS] - mean) / std).to_numpy(np.float32)
        self.target = frame["sales"].to_numpy(np.float32)

    def __len__(self):
        return len(self.target)

    def __getitem__(self, i):
        row = self.matrix[i]
        return torch.from_numpy(row[1:]), torch.tensor(self.target[i])


def mlp(n_in, hidden, dropout):
    layers, width = [], n_in
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, 1), nn.Softplus())


def masked_mape(pred, target):
    ape = (pred - target).abs() / target.abs()
    return ape[target != 0].mean()


def split(frame, valid_days):
    last = frame["d"].max()
    return frame[frame["d"] <= last - valid_days], frame[frame["d"] > last - valid_days]


def evaluate(model, loader):
    model.eval()
    sq, ape, n, n_nonzero = 0.0, 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x).squeeze(1)
            sq += ((pred - y) ** 2).sum().item()
            nz = y != 0
            ape += ((pred[nz] - y[nz]).abs() / y[nz]).sum().item()
            n += len(y)
            n_nonzero += int(nz.sum())
    return math.sqrt(sq / n), ape / max(n_nonzero, 1)


def main(cfg=CFG):
    torch.manual_seed(0)
    frame = pd.read_parquet(cfg["path"]).dropna(subset=["lag_28"])
    train_df, valid_df = split(frame, cfg["valid_days"])
    stats = (train_df[FEATURE_COLS].mean(), train_df[FEATURE_COLS].std() + 1e-6)
    train_ds, valid_ds = SalesRows(train_df, stats), SalesRows(valid_df, stats)
    train_dl = DataLoader(train_ds, batch_size=cfg["batch_size"], shuffle=True, num_workers=4)
    valid_dl = DataLoader(valid_ds, batch_size=16384)

    n_inputs = train_ds[0][0].numel()
    model = mlp(n_inputs, cfg["hidden"], cfg["dropout"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)

    for epoch in range(cfg["epochs"]):
        model.train()
        total, count = 0.0, 0
        for x, y in train_dl:
            loss = masked_mape(model(x).squeeze(1), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            k = int((y != 0).sum())
            total += loss.item() * k
            count += k
        scheduler.step()
        rmse, mape = evaluate(model, valid_dl)
        print(f"epoch {epoch:2d} train MAPE {total / count:.3f} valid RMSE {rmse:.3f} MAPE {mape:.3f}")
    torch.save({"model": model.state_dict(), "features": FEATURE_COLS}, "m5_mlp.pt")


if __name__ == "__main__":
    main()
