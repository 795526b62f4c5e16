"""Hourly building energy forecasting (ASHRAE-style meters) with an MLP over weather and
calendar features. Two targets per row: log1p electricity and log1p chilled water. Rows from
meters flagged as unreliable get a lower sample weight instead of being dropped.

python m10_building_energy_mlp.py --train data/energy/train.csv --epochs 25
"""
import argparse

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

NUMERIC = ["air_temperature", "dew_temperature", "wind_speed", "sea_level_pressure", "cloud_coverage",
           "square_feet", "year_built", "floor_count"]
CYCLIC = {"hour": 24, "dayofweek": 7, "month": 12}
TARGETS = ["electricity", "chilledwater"]


def cli():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/energy/train.csv")
    ap.add_argument("--valid-from", default="2016-10-01")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--huber-delta", type=float, default=1.0)
    ap.add_argument("--unreliable-weight", type=float, default=0.3)
    return ap.parse_args()


def featurize(df, stats=None):
    num = df[NUMERIC].astype("float32")
    if stats is None:
        stats = {"mean": num.mean(), "std": num.std().replace(0, 1.0)}
    num = ((num - stats["mean"]) / stats["std"]).fillna(0.0)
    cyc = []
    for col, period in CYCLIC.items():
        angle = 2 * np.pi * df[col].to_numpy(dtype=np.float32) / period
        cyc += [np.sin(angle), np.cos(angle)]
    x = np.concatenate([num.to_numpy(dtype=np.float32), np.stack(cyc, 1).astype(np.float32)], 1)
    y = np.log1p(df[TARGETS].to_numpy(dtype=np.float32))
    return x, y, stats


class WeightedHuber(nn.Module):
    def __init__(self, delta):
        super().__init__()
        self.delta = delta

    def forward(self, pred, target, weight):
        per_target = F.huber_loss(pred, target, reduction="none", delta=self.delta)
        per_row = per_target.mean(dim=1)
        return per_row * weight


class EnergyMLP(nn.Module):
    def __init__(self, d_in, n_sites, d_site=8, hidden=256):
        super().__init__()
        self.site = nn.Embedding(n_sites, d_site)
        self.net = nn.Sequential(
            nn.Linear(d_in + d_site, hidden), nn.SiLU(), nn.Dropout(0.1),
            nn.Linear(hidden, hidden), nn.SiLU(), nn.Dropout(0.1),
            nn.Linear(hidden, len(TARGETS)),
        )

    def forward(self, x, site):
        return self.net(torch.cat([x, self.site(site)], dim=1))


def make_loader(df, stats, args, shuffle):
    x, y, stats = featurize(df, stats)
    w = np.where(df["meter_flag"].to_numpy() == "unreliable", args.unreliable_weight, 1.0).astype(np.float32)
    site = df["site_id"].to_numpy(dtype=np.int64)
    ds = TensorDataset(torch.from_numpy(x), torch.from_numpy(site), torch.from_numpy(y), torch.from_numpy(w))
    return DataLoader(ds, batch_size=args.batch_size, shuffle=shuffle, drop_last=shuffle), stats


def main():
    args = cli()
    torch.manual_seed(0)
    np.random.seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    df = pd.read_csv(args.train, parse_dates=["timestamp"])
    df["hour"], df["dayofweek"], df["month"] = df.timestamp.dt.hour, df.timestamp.dt.dayofweek, df.timestamp.dt.month
    train_df, valid_df = df[df.timestamp < args.valid_from], df[df.timestamp >= args.valid_from]
    train_loader, stats = make_loader(train_df, None, args, shuffle=True)
    valid_loader, _ = make_loader(valid_df, stats, args, shuffle=False)

    model = EnergyMLP(train_loader.dataset.tensors[0].shape[1], int(df.site_id.max()) + 1).to(device)
    criterion = WeightedHuber(args.huber_delta)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))

    for epoch in range(args.epochs):
        model.train()
        for x, site, y, w in train_loader:
            x, site, y, w = x.to(device), site.to(device), y.to(device), w.to(device)
            loss = criterion(model(x, site), y, w)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
        model.eval()
        sq_err, rows = torch.zeros(len(TARGETS)), 0
        with torch.no_grad():
            for x, site, y, _ in valid_loader:
                pred = model(x.to(device), site.to(device)).cpu()
                sq_err += ((pred - y) ** 2).sum(0)
                rows += y.shape[0]
        rmsle = (sq_err / rows).sqrt()
        print(f"epoch {epoch:2d}  " + "  ".join(f"RMSLE[{t}] {v:.4f}" for t, v in zip(TARGETS, rmsle.tolist())))
    scaler = {k: {col: float(v) for col, v in stats[k].items()} for k in ("mean", "std")}
    torch.save({"model": model.state_dict(), "scaler": scaler}, "energy_mlp.pt")


if __name__ == "__main__":
    main()
