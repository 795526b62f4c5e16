"""24-hour-ahead temperature forecast for 40 weather stations from one week of hourly observations."""

import argparse
import math

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

VARIABLES = ["temp", "dewpoint", "pressure", "wind_u", "wind_v", "cloud", "hour_sin", "hour_cos"]
LOOKBACK, HORIZON = 168, 24


class StationWindows(Dataset):
    def __init__(self, array, mean, std):
        self.x = (array - mean) / std  # (stations, hours, variables)
        self.t_mean, self.t_std = mean[0], std[0]
        self.index = [(s, h) for s in range(array.shape[0]) for h in range(0, array.shape[1] - LOOKBACK - HORIZON, 6)]

    def __len__(self):
        return len(self.index)

    def __getitem__(self, k):
        s, h = self.index[k]
        past = torch.from_numpy(self.x[s, h : h + LOOKBACK]).float()
        future = torch.from_numpy(self.x[s, h + LOOKBACK : h + LOOKBACK + HORIZON, 0]).float()
        return past, future


class Forecaster(nn.Module):
    def __init__(self, n_vars=len(VARIABLES), d_model=128, heads=4, layers=3):
        super().__init__()
        self.inp = nn.Linear(n_vars, d_model)
        self.pos = nn.Parameter(torch.randn(1, LOOKBACK, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, HORIZON))

    def forward(self, past):
        h = self.encoder(self.inp(past) + self.pos)
        return self.head(h[:, -1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/stations_hourly.npy")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=5e-4)
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    arr = np.load(args.data).astype(np.float32)
    split = int(arr.shape[1] * 0.8)
    mean, std = arr[:, :split].mean(axis=(0, 1)), arr[:, :split].std(axis=(0, 1)) + 1e-6
    train_ds = StationWindows(arr[:, :split], mean, std)
    valid_ds = StationWindows(arr[:, split - LOOKBACK :], mean, std)
    train_dl = DataLoader(train_ds, batch_size=128, shuffle=True, num_workers=4, drop_last=True)
    valid_dl = DataLoader(valid_ds, batch_size=512, num_workers=4)

    model = Forecaster().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-6)
    loss_fn = nn.HuberLoss(delta=1.0)

    for epoch in range(args.epochs):
        model.train()
        for past, future in train_dl:
            past, future = past.to(device), future.to(device)
            loss = loss_fn(model(past), future)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()

        model.eval()
        sq_err, count = 0.0, 0
        with torch.no_grad():
            for past, future in valid_dl:
                pred = model(past.to(device)).cpu()
                sq_err += ((pred - future) * train_ds.t_std).pow(2).sum().item()
                count += future.numel()
        rmse = math.sqrt(sq_err / count)
        print(f"epoch {epoch:2d}  lr {scheduler.get_last_lr()[0]:.2e}  valid RMSE {rmse:.2f} degC")
    torch.save({"model": model.state_dict(), "mean": torch.from_numpy(mean), "std": torch.from_numpy(std)},
               "station_forecaster.pt")


if __name__ == "__main__":
    main()
