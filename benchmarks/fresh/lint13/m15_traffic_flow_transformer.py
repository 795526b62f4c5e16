"""Freeway traffic-flow forecasting (PeMS-style loop detectors, 5-minute bins).

Each sample is one sensor: 12 past steps of (flow, occupancy, speed) plus time-of-day and
day-of-week, predicting the next 12 flow values. A pre-norm Transformer encoder over the
history, with a learned embedding per step index and per sensor.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CONFIG = dict(
    data="data/pems04/pems04.npz",
    history=12,
    horizon=12,
    d_model=128,
    heads=8,
    layers=4,
    dropout=0.1,
    batch_size=256,
    epochs=40,
    lr=1e-3,
    train_frac=0.7,
    val_frac=0.1,
)


class SensorWindows(Dataset):
    def __init__(self, series, tod, dow, start, stop, history, horizon):
        self.series, self.tod, self.dow = series, tod, dow
        self.history, self.horizon = history, horizon
        self.n_sensors = series.shape[1]
        self.starts = np.arange(start, stop - history - horizon + 1)

    def __len__(self):
        return len(self.starts) * self.n_sensors

    def __getitem__(self, i):
        t0, sensor = self.starts[i // self.n_sensors], i % self.n_sensors
        past = slice(t0, t0 + self.history)
        future = slice(t0 + self.history, t0 + self.history + self.horizon)
        x = self.series[past, sensor]
        cal = np.stack([np.sin(2 * math.pi * self.tod[past]), np.cos(2 * math.pi * self.tod[past]),
                        self.dow[past] / 6.0], axis=1)
        feats = np.concatenate([x, cal], axis=1).astype(np.float32)
        return torch.from_numpy(feats), sensor, torch.from_numpy(self.series[future, sensor, 0].astype(np.float32))


class FlowForecaster(nn.Module):
    def __init__(self, n_in, n_sensors, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.inp = nn.Linear(n_in, d)
        self.step_emb = nn.Embedding(cfg["history"], d)
        self.sensor_emb = nn.Embedding(n_sensors, d)
        layer = nn.TransformerEncoderLayer(d, cfg["heads"], 4 * d, cfg["dropout"], activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg["layers"], norm=nn.LayerNorm(d))
        self.head = nn.Linear(d * cfg["history"], cfg["horizon"])

    def forward(self, x, sensor):
        steps = torch.arange(x.shape[1]).to(x.device)
        h = self.inp(x) + self.step_emb(steps) + self.sensor_emb(sensor).unsqueeze(1)
        h = self.encoder(h)
        return self.head(h.flatten(1))


def masked_mae(pred, target, null=0.0):
    mask = (target != null).float()
    mask = mask / mask.mean().clamp_min(1e-6)
    return (torch.abs(pred - target) * mask).mean()


def evaluate(model, loader, scale, device):
    model.eval()
    err = n = 0.0
    with torch.no_grad():
        for x, sensor, y in loader:
            pred = model(x.to(device), sensor.to(device)).cpu() * scale["std"] + scale["mean"]
            target = y * scale["std"] + scale["mean"]
            valid = target > 0
            err += (pred - target).abs()[valid].sum().item()
            n += valid.sum().item()
    return err / max(n, 1)


def main(cfg=CONFIG):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    z = np.load(cfg["data"])
    series, tod, dow = z["data"].astype(np.float32), z["time_of_day"], z["day_of_week"]
    T = series.shape[0]
    t_train, t_val = int(T * cfg["train_frac"]), int(T * (cfg["train_frac"] + cfg["val_frac"]))
    mean, std = series[:t_train].mean((0, 1)), series[:t_train].std((0, 1))
    series = (series - mean) / std
    scale = {"mean": float(mean[0]), "std": float(std[0])}
    make = lambda a, b: SensorWindows(series, tod, dow, a, b, cfg["history"], cfg["horizon"])
    train = DataLoader(make(0, t_train), batch_size=cfg["batch_size"], shuffle=True, num_workers=4, drop_last=True)
    val = DataLoader(make(t_train, t_val), batch_size=1024, num_workers=4)

    model = FlowForecaster(series.shape[2] + 3, series.shape[1], cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[20, 30], gamma=0.1)
    best = float("inf")
    for epoch in range(cfg["epochs"]):
        model.train()
        for x, sensor, y in train:
            x, sensor, y = x.to(device), sensor.to(device), y.to(device)
            loss = masked_mae(model(x, sensor), y, null=-mean[0] / std[0])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        scheduler.step()
        mae = evaluate(model, val, scale, device)
        print(f"epoch {epoch:2d}  train {loss.item():.4f}  val MAE {mae:.2f} veh/5min")
        if mae < best:
            best = mae
            torch.save(model.state_dict(), "pems_transformer.pt")


if __name__ == "__main__":
    main()
