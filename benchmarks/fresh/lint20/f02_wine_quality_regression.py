import argparse
import copy
import csv
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split


def read_table(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    target = "quality"
    columns = [c for c in rows[0] if c != target]
    x = torch.tensor([[float(r[c]) for c in columns] for r in rows], dtype=torch.float32)
    y = torch.tensor([float(r[target]) for r in rows], dtype=torch.float32).unsqueeze(1)
    return x, y, columns


class QualityRegressor(nn.Module):
    def __init__(self, n_in, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def mean_loss(model, loader, device):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            total += F.mse_loss(model(xb), yb, reduction="sum").item()
            count += yb.size(0)
    return total / count


def save_state(path, model, optimizer, scheduler, epoch, best, best_state):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "epoch": epoch, "best": best, "best_model": best_state}, path)


def load_state(path, model, optimizer, scheduler, device):
    state = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    return state["epoch"] + 1, state["best"], state["best_model"]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", default="winequality-red.csv")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--ckpt", default="wine_last.pt")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, y, columns = read_table(args.csv)
    n_val = max(1, len(x) // 5)
    train_set, val_set = random_split(TensorDataset(x, y), [len(x) - n_val, n_val], generator=torch.Generator().manual_seed(0))
    idx = torch.tensor(train_set.indices)
    mu, sigma = x[idx].mean(0), x[idx].std(0).clamp_min(1e-6)
    x.sub_(mu).div_(sigma)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=256)
    model = QualityRegressor(len(columns)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    start, best = 0, float("inf")
    best_state = copy.deepcopy(model.state_dict())
    if args.resume and Path(args.ckpt).exists():
        start, best, best_state = load_state(args.ckpt, model, optimizer, scheduler, device)
    for epoch in range(start, args.epochs):
        model.train()
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = F.mse_loss(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        val_mse = mean_loss(model, val_loader, device)
        if val_mse < best:
            best, best_state = val_mse, copy.deepcopy(model.state_dict())
        save_state(args.ckpt, model, optimizer, scheduler, epoch, best, best_state)
        print(f"epoch {epoch} val_mse {val_mse:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
    model.load_state_dict(best_state)
    torch.save({"model": model.state_dict(), "columns": columns, "mu": mu.tolist(), "sigma": sigma.tolist()}, "wine_best.pt")


if __name__ == "__main__":
    main()
