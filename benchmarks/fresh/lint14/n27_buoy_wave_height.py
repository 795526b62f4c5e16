import argparse
import csv
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CHANNELS = ["wave_height", "dominant_period", "wind_speed", "wind_u", "wind_v", "pressure"]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--records", default="data/buoys/station_46042_30min.csv")
    p.add_argument("--context", type=int, default=72)
    p.add_argument("--horizon", type=int, default=12)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=46042)
    p.add_argument("--out", default="runs/wave_height")
    return p.parse_args()


def load_hourly(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    half_hourly = torch.tensor([[float(r[c]) for c in CHANNELS] for r in rows])
    series = half_hourly.T.unsqueeze(0)
    hourly = F.interpolate(series, size=half_hourly.size(0) // 2, mode="linear", align_corners=True)
    return hourly.squeeze(0).T.contiguous()


def windows(series, context, horizon):
    starts = torch.arange(0, series.size(0) - context - horizon + 1)
    idx = starts[:, None] + torch.arange(context + horizon)[None, :]
    block = series[idx]
    return block[:, :context], block[:, context:, 0]


class ReverseReader(nn.Module):
    def __init__(self, inputs, hidden):
        super().__init__()
        self.ahead = nn.LSTM(inputs, hidden, batch_first=True)
        self.behind = nn.LSTM(inputs, hidden, batch_first=True)

    def forward(self, x):
        fwd, _ = self.ahead(x)
        bwd, _ = self.behind(torch.flip(x, dims=[1]))
        return torch.cat([fwd[:, -1], bwd[:, -1]], dim=1)


class WaveForecaster(nn.Module):
    def __init__(self, inputs, hidden, horizon):
        super().__init__()
        self.reader = ReverseReader(inputs, hidden)
        self.head = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, horizon))

    def forward(self, x):
        return self.head(self.reader(x))


def evaluate(model, loader, device, scale):
    model.eval()
    err, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device))
            err += (pred - y.to(device)).abs().sum().item()
            n += y.numel()
    return err / n * scale


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    series = load_hourly(args.records)
    split = int(series.size(0) * 0.8)
    mean, std = series[:split].mean(0), series[:split].std(0)
    series = (series - mean) / std
    x_tr, y_tr = windows(series[:split], args.context, args.horizon)
    x_va, y_va = windows(series[split - args.context:], args.context, args.horizon)
    train_loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True)
    valid_loader = DataLoader(TensorDataset(x_va, y_va), batch_size=1024)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = WaveForecaster(len(CHANNELS), 128, args.horizon).to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=3)
    best = float("inf")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.smooth_l1_loss(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        mae = evaluate(model, valid_loader, device, std[0].item())
        scheduler.step(mae)
        print(f"epoch {epoch:02d} valid MAE {mae:.3f} m lr {optimizer.param_groups[0]['lr']:.1e}")
        if mae < best:
            best = mae
            net = model.module if isinstance(model, nn.DataParallel) else model
            torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "mean": mean, "std": std, "epoch": epoch},
                       out / "best.pt")


if __name__ == "__main__":
    main()
