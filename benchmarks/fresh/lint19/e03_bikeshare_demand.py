import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class DemandNet(nn.Module):
    def __init__(self, n_stations, n_weather, dim=32):
        super().__init__()
        self.station = nn.Embedding(n_stations, dim)
        self.hour = nn.Embedding(24, 8)
        self.weekday = nn.Embedding(7, 4)
        self.mlp = nn.Sequential(
            nn.Linear(dim + 8 + 4 + n_weather, 128), nn.ReLU(),
            nn.Linear(128, 64), nn.ReLU(),
            nn.Linear(64, 1),
        )

    def forward(self, station, hour, weekday, weather):
        h = torch.cat([self.station(station), self.hour(hour), self.weekday(weekday), weather], dim=1)
        return self.mlp(h).squeeze(1)


def load_trips(path):
    d = np.load(path)
    weather = d["weather"].astype(np.float32)
    weather = (weather - weather.mean(0)) / (weather.std(0) + 1e-6)
    return TensorDataset(
        torch.from_numpy(d["station"]).long(), torch.from_numpy(d["hour"]).long(),
        torch.from_numpy(d["weekday"]).long(), torch.from_numpy(weather),
        torch.from_numpy(d["pickups"]).float(),
    )


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/bikes/train.npz")
    p.add_argument("--val", default="data/bikes/val.npz")
    p.add_argument("--stations", type=int, default=612)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--lr-step", type=int, default=10)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--ckpt", default="runs/bikes/last.pt")
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    train = DataLoader(load_trips(args.train), batch_size=1024, shuffle=True)
    val = DataLoader(load_trips(args.val), batch_size=4096)
    n_weather = train.dataset.tensors[3].shape[1]

    model = DemandNet(args.stations, n_weather)
    criterion = nn.PoissonNLLLoss(log_input=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.lr_step, gamma=0.5, verbose=args.verbose)

    start = 0
    if args.resume and os.path.exists(args.ckpt):
        state = torch.load(args.ckpt, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        scheduler.load_state_dict(state["scheduler"])
        start = state["epoch"] + 1
        print(f"resumed after epoch {state['epoch']}")

    for epoch in range(start, args.epochs):
        model.train()
        for station, hour, weekday, weather, pickups in train:
            optimizer.zero_grad()
            loss = criterion(model(station, hour, weekday, weather), pickups)
            loss.backward()
            optimizer.step()
        scheduler.step()

        model.eval()
        total, n = 0.0, 0
        with torch.no_grad():
            for station, hour, weekday, weather, pickups in val:
                rate = model(station, hour, weekday, weather).exp()
                total += (rate - pickups).abs().sum().item()
                n += pickups.numel()
        print(f"epoch {epoch} val MAE {total / n:.3f} pickups/h lr {scheduler.get_last_lr()[0]:.2e}")

        os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch}, args.ckpt)


if __name__ == "__main__":
    main()
