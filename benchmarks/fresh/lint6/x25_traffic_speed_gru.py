"""Short-term traffic speed forecasting on a motorway loop-detector network (207 sensors,
5-minute readings). Given the last hour (12 steps) of speeds at every sensor, predict the
speed at every sensor 15 minutes ahead."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

HISTORY, AHEAD = 12, 3


class SpeedWindows(Dataset):
    def __init__(self, speeds, time_of_day, mean, std):
        self.x = ((speeds - mean) / std).astype(np.float32)   # (T, sensors)
        self.tod = time_of_day.astype(np.float32)               # (T,) in [0, 1)
        self.mean, self.std = mean, std

    def __len__(self):
        return len(self.x) - HISTORY - AHEAD + 1

    def __getitem__(self, i):
        hist = self.x[i:i + HISTORY]                                       # (HISTORY, sensors)
        tod = np.repeat(self.tod[i:i + HISTORY, None], 2, axis=1)
        tod[:, 0], tod[:, 1] = np.sin(2 * np.pi * tod[:, 0]), np.cos(2 * np.pi * tod[:, 1])
        inputs = np.concatenate([hist, tod], axis=1)                       # (HISTORY, sensors + 2)
        target = self.x[i + HISTORY + AHEAD - 1]                           # (sensors,)
        return torch.from_numpy(inputs), torch.from_numpy(target)


class SpeedGRU(nn.Module):
    def __init__(self, n_sensors, hidden=256, layers=2):
        super().__init__()
        self.gru = nn.GRU(n_sensors + 2, hidden, num_layers=layers, dropout=0.1)
        self.out = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_sensors))

    def forward(self, window):
        seq, _ = self.gru(window)
        return self.out(seq[:, -1])


def masked_mae(pred, target, null_value):
    mask = (target != null_value).float()
    return (torch.abs(pred - target) * mask).sum() / mask.sum().clamp(min=1.0)


def main():
    raw = np.load("data/motorway_speeds.npz")
    speeds, tod = raw["speed"], raw["time_of_day"]          # zeros mark missing readings
    n = len(speeds)
    train_end, val_end = int(0.7 * n), int(0.8 * n)
    observed = speeds[:train_end][speeds[:train_end] > 0]
    mean, std = observed.mean(), observed.std()
    null_norm = float((0.0 - mean) / std)

    train_ds = SpeedWindows(speeds[:train_end], tod[:train_end], mean, std)
    val_ds = SpeedWindows(speeds[train_end:val_end], tod[train_end:val_end], mean, std)
    train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=256)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SpeedGRU(speeds.shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[20, 35], gamma=0.1)

    for epoch in range(50):
        model.train()
        for window, target in train_dl:
            window, target = window.to(device), target.to(device)
            optimizer.zero_grad()
            loss = masked_mae(model(window), target, null_norm)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        scheduler.step()

        model.eval()
        abs_err, count = 0.0, 0.0
        with torch.no_grad():
            for window, target in val_dl:
                pred = model(window.to(device)).cpu()
                valid = target != null_norm
                abs_err += (torch.abs(pred - target) * std)[valid].sum().item()
                count += valid.sum().item()
        print(f"epoch {epoch}: val MAE {abs_err / count:.2f} km/h (15 min ahead)")

    torch.save(model.state_dict(), "speed_gru.pt")


if __name__ == "__main__":
    main()
