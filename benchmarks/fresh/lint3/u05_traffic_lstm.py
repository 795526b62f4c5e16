"""Traffic speed forecasting (METR-LA style sensors): predict the next 12 steps from the last 24."""

import argparse
import logging
import math

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("traffic")


class Windows(Dataset):
    def __init__(self, series, history=24, horizon=12):
        self.series = series  # (T, sensors) float tensor, already scaled
        self.history, self.horizon = history, horizon

    def __len__(self):
        return self.series.shape[0] - self.history - self.horizon + 1

    def __getitem__(self, i):
        x = self.series[i : i + self.history]
        y = self.series[i + self.history : i + self.history + self.horizon]
        return x, y


class Seq2Horizon(nn.Module):
    def __init__(self, n_sensors, hidden=128, horizon=12, layers=2):
        super().__init__()
        self.rnn = nn.LSTM(n_sensors, hidden, num_layers=layers, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, horizon * n_sensors)
        self.horizon, self.n_sensors = horizon, n_sensors

    def forward(self, x):  # x: (batch, history, sensors)
        out, _ = self.rnn(x)
        last = out[:, -1]  # final time step of every sequence
        return self.head(last).view(x.size(0), self.horizon, self.n_sensors)


def masked_mae(pred, target, null_value=0.0):
    mask = (target != null_value).float()
    mask = mask / mask.mean().clamp(min=1e-6)
    return (torch.abs(pred - target) * mask).mean()


def evaluate(model, loader, device, scale):
    model.eval()
    errs = []
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            errs.append(masked_mae(model(x) * scale, y * scale).item())
    return float(np.mean(errs))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/metr_la_speed.npy")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--bs", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    raw = np.load(args.data).astype(np.float32)  # (T, sensors), mph
    n_train, n_val = int(0.7 * len(raw)), int(0.1 * len(raw))
    scale = float(raw[:n_train].max())
    series = torch.from_numpy(raw) / scale  # a new tensor; raw is left as read
    train_ds = Windows(series[:n_train])
    val_ds = Windows(series[n_train : n_train + n_val])
    train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, num_workers=2, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=256, shuffle=False)

    model = Seq2Horizon(raw.shape[1]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[20, 40], gamma=0.1)
    best = math.inf
    for epoch in range(args.epochs):
        model.train()
        losses = []
        for x, y in train_dl:
            x = x.to(device)
            y = y.to(device)
            opt.zero_grad()
            loss = masked_mae(model(x), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            opt.step()
            losses.append(loss.item())
        sched.step()
        val_mae = evaluate(model, val_dl, device, scale)
        log.info("epoch %d train %.4f val MAE %.3f mph lr %.1e", epoch, np.mean(losses), val_mae,
                 sched.get_last_lr()[0])
        if val_mae < best:
            best = val_mae
            torch.save({"model": model.state_dict(), "scale": scale}, "traffic_lstm.pt")

    ckpt = torch.load("traffic_lstm.pt", map_location=device, weights_only=True)
    model.load_state_dict(ckpt["model"])
    log.info("best val MAE %.3f mph (reloaded: %.3f)", best, evaluate(model, val_dl, device, scale))


if __name__ == "__main__":
    main()
