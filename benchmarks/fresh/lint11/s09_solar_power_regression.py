"""Hour-ahead PV power for a fleet of rooftop plants from the last 12 hours of weather + output.

Each sample: a (12, F) window of NWP/irradiance features and past output for one plant, the
plant's installed capacity (kWp), and the normalised output for the next hour. The loss weights
each plant by its capacity so that large plants dominate, as the grid operator scores it.
"""
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    table: str = "data/pv_hourly.parquet"
    history: int = 12
    hidden: int = 256
    dropout: float = 0.1
    micro_batch: int = 256
    accum_steps: int = 8
    epochs: int = 25
    lr: float = 1e-3
    val_from: str = "2023-07-01"
    seed: int = 5
    out: str = "runs/pv_mlp.pt"


FEATURES = ["ghi", "dni", "dhi", "temp_air", "cloud_cover", "wind_speed", "sun_elevation", "power_norm"]


class PlantWindows(Dataset):
    def __init__(self, df, history, mean, std):
        self.samples = []
        for _, g in df.groupby("plant_id"):
            g = g.sort_values("timestamp")
            x = ((g[FEATURES].to_numpy(np.float32) - mean) / std).astype(np.float32)
            y = g["power_norm"].to_numpy(np.float32)
            cap = np.float32(g["capacity_kwp"].iloc[0])
            for t in range(history, len(g)):
                self.samples.append((x[t - history : t], y[t], cap))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        x, y, cap = self.samples[i]
        return torch.from_numpy(x), torch.tensor(y), torch.tensor(cap)


class PVNet(nn.Module):
    def __init__(self, history, n_features, hidden, dropout):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(),
            nn.Linear(history * n_features, hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x)


def capacity_weighted_mse(pred, target, capacity):
    w = capacity / capacity.mean()
    return (w * (pred - target) ** 2).mean()


def evaluate(model, loader, device):
    model.eval()
    abs_err, cap_sum = 0.0, 0.0
    with torch.no_grad():
        for x, y, cap in loader:
            pred = model(x.to(device)).squeeze(1).cpu()
            abs_err += (cap * (pred - y).abs()).sum().item()
            cap_sum += cap.sum().item()
    return abs_err / cap_sum


def main(cfg=Config()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    df = pd.read_parquet(cfg.table)
    df["timestamp"] = pd.to_datetime(df["timestamp"])
    train_df = df[df["timestamp"] < cfg.val_from]
    val_df = df[df["timestamp"] >= cfg.val_from]
    mean = train_df[FEATURES].to_numpy(np.float32).mean(axis=0)
    std = train_df[FEATURES].to_numpy(np.float32).std(axis=0) + 1e-6

    train_loader = DataLoader(PlantWindows(train_df, cfg.history, mean, std), batch_size=cfg.micro_batch,
                              shuffle=True, drop_last=True, num_workers=2)
    val_loader = DataLoader(PlantWindows(val_df, cfg.history, mean, std), batch_size=1024)

    model = PVNet(cfg.history, len(FEATURES), cfg.hidden, cfg.dropout).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)

    best = float("inf")
    for epoch in range(cfg.epochs):
        model.train()
        optimizer.zero_grad()
        running, seen = 0.0, 0
        for step, (x, y, cap) in enumerate(train_loader):
            x, y, cap = x.to(device), y.to(device), cap.to(device)
            loss = capacity_weighted_mse(model(x), y, cap)
            loss.backward()
            if (step + 1) % cfg.accum_steps == 0:
                nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                optimizer.step()
                optimizer.zero_grad()
            running += loss.item() * x.size(0)
            seen += x.size(0)
        scheduler.step()

        val_mae = evaluate(model, val_loader, device)
        print(f"epoch {epoch:02d} train {running / seen:.5f} val cap-weighted MAE {val_mae:.5f}")
        if val_mae < best:
            best = val_mae
            Path(cfg.out).parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "mean": torch.from_numpy(mean), "std": torch.from_numpy(std)}, cfg.out)
    print(f"best val MAE {best:.5f}")


if __name__ == "__main__":
    main()
