import argparse
import csv
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

SENSORS = ["ec", "ph", "water_temp", "air_temp", "humidity", "par", "co2", "dissolved_o2"]


class YieldRegressor(nn.Module):
    def __init__(self, n_sensors, steps, hidden=64):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(n_sensors, hidden, 5, padding=2), nn.GELU(),
            nn.Conv1d(hidden, hidden, 5, padding=2, stride=2), nn.GELU(),
        )
        self.dropout = nn.Dropout(0.3)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.encoder(x.transpose(1, 2)).mean(dim=2)
        return self.out(self.dropout(h))


def load_split(folder, stats):
    arr = np.load(folder / "sensors.npy").astype(np.float32)
    mean = np.asarray(stats["mean"], dtype=np.float32)
    std = np.asarray(stats["std"], dtype=np.float32)
    x = torch.from_numpy((arr - mean) / std)
    y = torch.from_numpy(np.load(folder / "yield_g.npy").astype(np.float32))
    return TensorDataset(x, y)


def restore(path, device):
    ckpt = torch.load(path, map_location=device, weights_only=True)
    cfg = ckpt["config"]
    model = YieldRegressor(len(SENSORS), cfg["steps"], cfg["hidden"])
    model.load_state_dict(ckpt["model"])
    return model.to(device).eval(), ckpt["stats"]


@torch.no_grad()
def predict(model, loader, device):
    preds, targets, batch_losses = [], [], []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        pred = model(x).squeeze(1)
        loss = F.l1_loss(pred, y, reduction="sum")
        batch_losses.append(loss.item())
        preds.append(pred.detach().cpu().numpy())
        targets.append(y.cpu().numpy())
    n = sum(len(t) for t in targets)
    return np.concatenate(preds), np.concatenate(targets), sum(batch_losses) / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", type=Path, default=Path("runs/hydro/best.pt"))
    parser.add_argument("--split", type=Path, default=Path("data/hydro/test"))
    parser.add_argument("--out", type=Path, default=Path("runs/hydro/test_predictions.csv"))
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model, stats = restore(args.checkpoint, device)
    dataset = load_split(args.split, stats)
    loader = DataLoader(dataset, batch_size=512)
    preds, targets, mae = predict(model, loader, device)

    rmse = float(np.sqrt(np.mean((preds - targets) ** 2)))
    print(f"test MAE {mae:.2f} g  RMSE {rmse:.2f} g  over {len(targets)} trays")
    with args.out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["tray", "predicted_g", "measured_g"])
        for i, (p, t) in enumerate(zip(preds, targets)):
            writer.writerow([i, f"{p:.1f}", f"{t:.1f}"])
    args.out.with_suffix(".json").write_text(json.dumps({"mae": mae, "rmse": rmse}))


if __name__ == "__main__":
    main()
