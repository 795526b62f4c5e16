import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

FEATURES = ["elevation_m", "slope_deg", "aspect_sin", "aspect_cos", "canopy_cover", "sar_vv_db", "sar_vh_db",
            "lst_day_k", "lst_night_k", "precip_cum_mm", "days_since_snowfall"]
HPARAMS = {"hidden": [128, 64], "dropout": 0.1, "lr": 1e-3, "epochs": 80, "batch_size": 256}


def build_mlp(n_in, hidden, dropout):
    layers = []
    for width in hidden:
        layers += [nn.Linear(n_in, width), nn.ReLU(), nn.Dropout(dropout)]
        n_in = width
    layers.append(nn.Linear(n_in, 1))
    return nn.Sequential(*layers)


def load_table(path, stats=None):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    x = np.array([[r[f] for f in FEATURES] for r in rows], dtype=np.float32)
    y = np.array([r["snow_depth_cm"] for r in rows], dtype=np.float32)
    if stats is None:
        stats = (x.mean(0), x.std(0) + 1e-6)
    x = (x - stats[0]) / stats[1]
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), stats


def evaluate(model, loader):
    model.eval()
    abs_err, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            abs_err += (model(x).squeeze(1) - y).abs().sum().item()
            n += len(y)
    return abs_err / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/snow/stations_train.jsonl")
    ap.add_argument("--val", default="data/snow/stations_val.jsonl")
    ap.add_argument("--hparams", default=None)
    args = ap.parse_args()
    hp = dict(HPARAMS)
    if args.hparams:
        hp.update(json.loads(Path(args.hparams).read_text()))

    torch.manual_seed(27)
    train_ds, stats = load_table(args.train)
    val_ds, _ = load_table(args.val, stats)
    train_dl = DataLoader(train_ds, batch_size=hp["batch_size"], shuffle=True)
    val_dl = DataLoader(val_ds, batch_size=2048)

    model = build_mlp(len(FEATURES), hp["hidden"], hp["dropout"])
    criterion = nn.L1Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=hp["lr"])
    best = float("inf")
    for epoch in range(hp["epochs"]):
        model.train()
        for x, depth in train_dl:
            optimizer.zero_grad()
            loss = criterion(model(x), depth)
            loss.backward()
            optimizer.step()
        mae = evaluate(model, val_dl)
        if mae < best:
            best = mae
            torch.save({"model": model.state_dict(), "mean": torch.from_numpy(stats[0]),
                        "std": torch.from_numpy(stats[1]), "hparams": hp}, "snow_depth_mlp.pt")
        print(f"epoch {epoch} val MAE {mae:.2f} cm (best {best:.2f})")


if __name__ == "__main__":
    main()
