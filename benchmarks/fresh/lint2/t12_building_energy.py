"""Hourly building-energy regressor (MLP on weather + calendar features), resumable.

    python t12_building_energy.py --epochs 30                 # fresh run
    python t12_building_energy.py --epochs 30 --resume run.pt # continue after a pre-emption
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def load_arrays(path):
    data = np.load(path)
    x, y = data["features"].astype(np.float32), data["kwh"].astype(np.float32)
    n_train = int(0.85 * len(x))
    mean, std = x[:n_train].mean(axis=0), x[:n_train].std(axis=0) + 1e-6
    x = (x - mean) / std
    y = np.log1p(y)
    train = TensorDataset(torch.from_numpy(x[:n_train]), torch.from_numpy(y[:n_train]))
    valid = TensorDataset(torch.from_numpy(x[n_train:]), torch.from_numpy(y[n_train:]))
    return train, valid


class EnergyMLP(nn.Module):
    def __init__(self, n_in, width=256, depth=3, p=0.1):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.SiLU(), nn.Dropout(p)]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/building_hourly.npz")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--max-lr", type=float, default=3e-3)
    ap.add_argument("--resume", default=None)
    ap.add_argument("--ckpt", default="run.pt")
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_set, valid_set = load_arrays(args.data)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=4096)
    model = EnergyMLP(train_set.tensors[0].shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.max_lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.max_lr, total_steps=args.epochs * len(train_loader), pct_start=0.2
    )

    start_epoch = 0
    if args.resume and os.path.exists(args.resume):
        ckpt = torch.load(args.resume, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1
        print(f"resumed from epoch {ckpt['epoch']} (run started with {ckpt['args']})")

    for epoch in range(start_epoch, args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.smooth_l1_loss(model(x), y, beta=0.1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()

        model.eval()
        se, n = 0.0, 0
        with torch.no_grad():
            for x, y in valid_loader:
                pred = model(x.to(device)).cpu()
                se += (torch.expm1(pred) - torch.expm1(y)).pow(2).sum().item()
                n += y.numel()
        print(f"epoch {epoch}: valid RMSE {np.sqrt(se / n):.2f} kWh, lr {scheduler.get_last_lr()[0]:.2e}")

        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
                "args": args,
            },
            args.ckpt,
        )


if __name__ == "__main__":
    main()
