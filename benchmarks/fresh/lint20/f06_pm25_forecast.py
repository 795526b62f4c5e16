import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, Subset


class StationWindows(Dataset):
    def __init__(self, npz_path, window, horizon):
        data = np.load(npz_path)
        feats = torch.from_numpy(data["features"]).float()
        self.feats = (feats - feats.mean(0)) / feats.std(0).clamp_min(1e-6)
        self.pm25 = torch.from_numpy(data["pm25"]).float()
        self.window, self.horizon = window, horizon

    def __len__(self):
        return len(self.pm25) - self.window - self.horizon + 1

    def __getitem__(self, i):
        x = self.feats[i : i + self.window]
        y = self.pm25[i + self.window + self.horizon - 1]
        return x, torch.log1p(y)


class Forecaster(nn.Module):
    def __init__(self, n_features, hidden=96, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, num_layers=layers, batch_first=True, dropout=0.1)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        seq, _ = self.lstm(x)
        return self.out(seq[:, -1])


def save_checkpoint(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)


def restore(path, model, device):
    ckpt = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(ckpt["model"])
    return ckpt["epoch"] + 1


def validate(model, loader, criterion, device):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            total += criterion(model(x), y).item() * len(y)
            n += len(y)
    return total / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="beijing_station.npz")
    parser.add_argument("--window", type=int, default=48)
    parser.add_argument("--horizon", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--ckpt", default="pm25_lstm.pt")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = StationWindows(args.data, args.window, args.horizon)
    cut = int(0.85 * len(dataset))
    train_loader = DataLoader(Subset(dataset, range(cut)), batch_size=128, shuffle=True)
    val_loader = DataLoader(Subset(dataset, range(cut, len(dataset))), batch_size=512)
    model = Forecaster(dataset.feats.shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.HuberLoss(delta=1.0)
    start = restore(args.ckpt, model, device) if args.resume and os.path.exists(args.ckpt) else 0
    for epoch in range(start, args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            pred = model(x)
            loss = criterion(pred, y)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        val_loss = validate(model, val_loader, criterion, device)
        print(f"epoch {epoch}: val huber {val_loss:.4f}")
        save_checkpoint(args.ckpt, model, optimizer, epoch)


if __name__ == "__main__":
    main()
