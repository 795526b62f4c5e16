import argparse
import json

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def load_fingerprints(path):
    with open(path) as f:
        records = json.load(f)
    bits = np.array([r["morgan_bits"] for r in records], dtype=np.float32)
    extra = np.array([[r["mw_repeat"] / 500.0, r["rotatable"] / 10.0, r["aromatic_frac"]] for r in records], dtype=np.float32)
    tg = np.array([r["tg_kelvin"] for r in records], dtype=np.float32)
    return np.concatenate([bits, extra], axis=1), tg


class TgRegressor(nn.Module):
    def __init__(self, n_in, hidden=512, depth=3, dropout=0.1):
        super().__init__()
        layers, width = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SiLU(), nn.Dropout(dropout)]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def run_epoch(model, loader, optimizer=None):
    training = optimizer is not None
    model.train(training)
    abs_err, n = 0.0, 0
    with torch.set_grad_enabled(training):
        for x, y in loader:
            pred = model(x)
            loss = nn.functional.smooth_l1_loss(pred, y, beta=0.1)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            abs_err += (pred.detach() - y).abs().sum().item()
            n += len(y)
    return abs_err / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/polymers_tg.json")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--patience", type=int, default=25)
    p.add_argument("--lr", type=float, default=3e-4)
    args = p.parse_args()
    torch.manual_seed(7)

    x, tg = load_fingerprints(args.data)
    mu, sigma = tg.mean(), tg.std()
    dataset = TensorDataset(torch.from_numpy(x), torch.from_numpy((tg - mu) / sigma))
    n_val = len(dataset) // 5
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val], generator=torch.Generator().manual_seed(0))
    train_loader = DataLoader(train_set, batch_size=128, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=512)

    model = TgRegressor(x.shape[1])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best = {"epoch": -1, "mae": float("inf"), "weights": None}
    for epoch in range(args.epochs):
        train_mae = run_epoch(model, train_loader, optimizer)
        val_mae = run_epoch(model, val_loader)
        print(f"epoch {epoch:3d} train MAE {train_mae * sigma:.1f} K  val MAE {val_mae * sigma:.1f} K")
        if val_mae < best["mae"]:
            best = {"epoch": epoch, "mae": val_mae, "weights": {name: t for name, t in model.state_dict().items()}}
        elif epoch - best["epoch"] >= args.patience:
            break

    model.load_state_dict(best["weights"])
    print(f"restored epoch {best['epoch']} (val MAE {best['mae'] * sigma:.1f} K), checking: {run_epoch(model, val_loader) * sigma:.1f} K")
    torch.save({"model": model.state_dict(), "tg_mean": float(mu), "tg_std": float(sigma)}, "tg_regressor.pt")


if __name__ == "__main__":
    main()
