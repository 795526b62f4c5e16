"""48-hour PM2.5 forecasting with an LSTM encoder-decoder over city monitoring stations."""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

CFG = {
    "data": "data/airq/stations.npz",
    "history": 96,
    "horizon": 48,
    "hidden": 128,
    "epochs": 60,
    "batch_size": 128,
    "lr": 2e-3,
    "milestones": [30, 45],
    "gamma": 0.2,
    "clip": 1.0,
    "out": "checkpoints/pm25_seq2seq.pt",
}


class StationWindows(Dataset):
    def __init__(self, series, history, horizon, mean, std):
        self.x = (series - mean) / std
        self.history, self.horizon = history, horizon
        self.index = [(s, t) for s in range(self.x.shape[0])
                      for t in range(self.x.shape[1] - history - horizon + 1)]

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        s, t = self.index[i]
        window = self.x[s, t: t + self.history + self.horizon]
        past = torch.from_numpy(window[: self.history])
        future = torch.from_numpy(window[self.history:, 0])
        return past, future


class Seq2Seq(nn.Module):
    def __init__(self, n_feat, hidden, horizon):
        super().__init__()
        self.encoder = nn.LSTM(n_feat, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.decoder = nn.LSTMCell(1, hidden)
        self.proj = nn.Linear(hidden, 1)
        self.horizon = horizon

    def forward(self, past, future=None, teacher_forcing=0.0):
        _, (h, c) = self.encoder(past)
        h, c = h[-1], c[-1]
        y = past[:, -1, :1]
        outs = []
        for t in range(self.horizon):
            h, c = self.decoder(y, (h, c))
            pred = self.proj(h)
            outs.append(pred)
            if future is not None and random.random() < teacher_forcing:
                y = future[:, t: t + 1]
            else:
                y = pred
        return torch.cat(outs, dim=1)


def train_one_epoch(model, loader, optimizer, scheduler, cfg, tf_ratio):
    model.train()
    total, n = 0.0, 0
    for past, future in loader:
        optimizer.zero_grad()
        pred = model(past, future, teacher_forcing=tf_ratio)
        loss = nn.functional.smooth_l1_loss(pred, future)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
        optimizer.step()
        scheduler.step()
        total += loss.item() * past.size(0)
        n += past.size(0)
    return total / max(n, 1)


@torch.no_grad()
def evaluate(model, loader, std):
    model.eval()
    err, n = 0.0, 0
    for past, future in loader:
        err += (model(past) - future).abs().sum().item()
        n += future.numel()
    return err / max(n, 1) * std


def main(cfg=CFG):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=cfg["epochs"])
    parser.add_argument("--data", default=cfg["data"])
    args = parser.parse_args()
    cfg = dict(cfg, epochs=args.epochs, data=args.data)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    arr = np.load(cfg["data"])["values"].astype(np.float32)
    split = int(arr.shape[1] * 0.8)
    train_arr, val_arr = arr[:, :split], arr[:, split:]
    mean = train_arr.reshape(-1, arr.shape[2]).mean(0)
    std = train_arr.reshape(-1, arr.shape[2]).std(0) + 1e-6
    train_ds = StationWindows(train_arr, cfg["history"], cfg["horizon"], mean, std)
    val_ds = StationWindows(val_arr, cfg["history"], cfg["horizon"], mean, std)
    train_dl = DataLoader(train_ds, batch_size=cfg["batch_size"], shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=cfg["batch_size"])

    model = Seq2Seq(arr.shape[2], cfg["hidden"], cfg["horizon"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=cfg["milestones"],
                                                     gamma=cfg["gamma"])
    best = float("inf")
    for epoch in range(cfg["epochs"]):
        tf_ratio = max(0.0, 0.8 - epoch / 40)
        loss = train_one_epoch(model, train_dl, optimizer, scheduler, cfg, tf_ratio)
        mae = evaluate(model, val_dl, float(std[0]))
        print(f"epoch {epoch:2d}  loss {loss:.4f}  val MAE {mae:.2f} ug/m3  lr {scheduler.get_last_lr()[0]:.2e}")
        if mae < best:
            best = mae
            os.makedirs(os.path.dirname(cfg["out"]) or ".", exist_ok=True)
            torch.save({"model": model.state_dict(), "mean": torch.from_numpy(mean),
                        "std": torch.from_numpy(std)}, cfg["out"])


if __name__ == "__main__":
    main()
