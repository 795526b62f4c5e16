"""Power-curve regression for a wind farm from 10-minute SCADA records.

Predicts active power (kW) from wind speed, direction, rotor speed, blade pitch and ambient
temperature, so that under-performing turbines can be flagged against the learned curve.
"""
import argparse
import csv
import json
import math
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FEATURES = ["wind_speed", "wind_dir", "rotor_rpm", "pitch_deg", "ambient_temp"]
TARGET = "power_kw"


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def read_scada(path):
    rows = []
    with open(path, newline="") as fh:
        for rec in csv.DictReader(fh):
            if rec[TARGET] in ("", "nan"):
                continue
            direction = math.radians(float(rec["wind_dir"]))
            feats = [float(rec["wind_speed"]), math.sin(direction), math.cos(direction),
                     float(rec["rotor_rpm"]), float(rec["pitch_deg"]), float(rec["ambient_temp"])]
            rows.append((feats, float(rec[TARGET])))
    x = np.asarray([r[0] for r in rows], dtype=np.float32)
    y = np.asarray([r[1] for r in rows], dtype=np.float32)
    return x, y


class ScadaDataset(Dataset):
    def __init__(self, x, y, stats):
        self.x = torch.from_numpy((x - stats["x_mean"]) / stats["x_std"])
        self.y = torch.from_numpy(y / stats["rated_kw"])

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class PowerCurveNet(nn.Module):
    def __init__(self, n_in, hidden=64, depth=3):
        super().__init__()
        layers, width = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SiLU()]
            width = hidden
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def huber(pred, target, delta):
    err = pred - target
    quad = torch.clamp(err.abs(), max=delta)
    return (0.5 * quad ** 2 + delta * (err.abs() - quad)).mean()


def train_epoch(model, loader, optimizer, delta, device):
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = huber(model(x), y, delta)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        count += len(y)
    return total / count


@torch.no_grad()
def evaluate(model, loader, rated_kw, device):
    model.eval()
    abs_err, count = 0.0, 0
    for x, y in loader:
        pred = model(x.to(device)).squeeze(1).cpu()
        abs_err += (pred - y).abs().sum().item() * rated_kw
        count += len(y)
    return abs_err / count


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--train-csv", default="data/scada_train.csv")
    p.add_argument("--valid-csv", default="data/scada_valid.csv")
    p.add_argument("--rated-kw", type=float, default=2050.0)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--delta", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", default="runs/power_curve")
    args = p.parse_args(argv)

    seed_everything(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x_tr, y_tr = read_scada(args.train_csv)
    x_va, y_va = read_scada(args.valid_csv)
    stats = {"x_mean": x_tr.mean(0), "x_std": x_tr.std(0) + 1e-6, "rated_kw": args.rated_kw}
    train_dl = DataLoader(ScadaDataset(x_tr, y_tr, stats), batch_size=args.batch_size, shuffle=True)
    valid_dl = DataLoader(ScadaDataset(x_va, y_va, stats), batch_size=1024)

    model = PowerCurveNet(x_tr.shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    best = float("inf")
    for epoch in range(args.epochs):
        loss = train_epoch(model, train_dl, optimizer, args.delta, device)
        mae = evaluate(model, valid_dl, args.rated_kw, device)
        print(f"epoch {epoch:3d}  train huber {loss:.4f}  valid MAE {mae:.1f} kW")
        if mae < best:
            best = mae
            torch.save({"model": model.state_dict(), "epoch": epoch,
                        "x_mean": stats["x_mean"].tolist(), "x_std": stats["x_std"].tolist()},
                       out / "best.pt")
    (out / "summary.json").write_text(json.dumps({"best_valid_mae_kw": best}))


if __name__ == "__main__":
    main()
