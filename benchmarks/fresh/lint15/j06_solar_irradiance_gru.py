import argparse
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

FEATURES = ["ghi", "dni", "dhi", "temp", "humidity", "cloud_cover", "zenith_cos", "hour_sin", "hour_cos"]


def load_station(path):
    data = np.genfromtxt(path, delimiter=",", names=True)
    table = np.stack([data[name] for name in FEATURES], axis=1).astype(np.float32)
    return np.nan_to_num(table)


class Windows(Dataset):
    def __init__(self, table, lookback, horizon, mean, std):
        self.x = (table - mean) / std
        self.target = self.x[:, 0]
        self.lookback, self.horizon = lookback, horizon

    def __len__(self):
        return len(self.x) - self.lookback - self.horizon + 1

    def __getitem__(self, i):
        past = self.x[i:i + self.lookback]
        future = self.target[i + self.lookback:i + self.lookback + self.horizon]
        return torch.from_numpy(past), torch.from_numpy(future)


class Nowcaster(nn.Module):
    def __init__(self, n_features, hidden, horizon):
        super().__init__()
        self.encoder = nn.GRU(n_features, hidden, num_layers=2, dropout=0.1)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, horizon))

    def forward(self, past):
        out, _ = self.encoder(past)
        return self.head(out[:, -1])


class EarlyStopping:
    def __init__(self, patience, min_delta=1e-4):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.best_state = None
        self.bad_epochs = 0

    def __call__(self, model, score):
        if score < self.best - self.min_delta:
            self.best = score
            self.best_state = copy.deepcopy(model.state_dict())
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


@torch.no_grad()
def horizon_rmse(model, loader, device):
    model.eval()
    sq_err, count = 0.0, 0
    for past, future in loader:
        pred = model(past.to(device))
        sq_err = sq_err + F.mse_loss(pred, future.to(device), reduction="none").sum(0)
        count += future.shape[0]
    return torch.sqrt(sq_err / count).cpu()


def fit(model, train_loader, val_loader, epochs, lr, device, patience):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)
    stopper = EarlyStopping(patience)
    for epoch in range(epochs):
        model.train()
        for past, future in train_loader:
            past, future = past.to(device), future.to(device)
            loss = F.mse_loss(model(past), future)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        rmse = horizon_rmse(model, val_loader, device)
        plateau.step(rmse.mean().item())
        print(f"epoch {epoch}: rmse per horizon {[round(v, 3) for v in rmse.tolist()]}")
        if stopper(model, rmse):
            break
    if stopper.best_state is not None:
        model.load_state_dict(stopper.best_state)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", default="data/solar_station_hourly.csv")
    parser.add_argument("--lookback", type=int, default=48)
    parser.add_argument("--horizon", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--patience", type=int, default=5)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    table = load_station(args.csv)
    cut = int(0.8 * len(table))
    mean, std = table[:cut].mean(0), table[:cut].std(0) + 1e-6
    train_set = Windows(table[:cut], args.lookback, args.horizon, mean, std)
    val_set = Windows(table[cut:], args.lookback, args.horizon, mean, std)
    train_loader = DataLoader(train_set, batch_size=256, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=512)
    model = Nowcaster(len(FEATURES), args.hidden, args.horizon).to(device)
    model = fit(model, train_loader, val_loader, args.epochs, args.lr, device, args.patience)
    torch.save({"model": model.state_dict(), "mean": torch.from_numpy(mean), "std": torch.from_numpy(std)},
               "solar_nowcaster.pt")


if __name__ == "__main__":
    main()
