"""Day-ahead electricity load forecasting for 370 clients with a temporal convolution network.

The job runs on a preemptible queue: it checkpoints every epoch and picks up where it stopped
when restarted with the same arguments.
"""
import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm
from torch.utils.data import DataLoader, Dataset


@dataclass
class RunConfig:
    series: str = "data/electricity_hourly.npy"
    checkpoint: str = "runs/tcn_load/last.pt"
    history: int = 168
    horizon: int = 24
    channels: int = 64
    levels: int = 6
    kernel: int = 3
    dropout: float = 0.1
    epochs: int = 60
    batch: int = 256
    lr: float = 1e-3
    train_frac: float = 0.8


class LoadWindows(Dataset):
    def __init__(self, series, history, horizon, start, stop):
        self.x = torch.from_numpy(series.astype(np.float32))
        self.history, self.horizon = history, horizon
        self.starts = [(c, t) for c in range(series.shape[0])
                       for t in range(start, stop - history - horizon + 1, 6)]

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        c, t = self.starts[i]
        window = self.x[c, t: t + self.history + self.horizon]
        return window[: self.history].unsqueeze(0), window[self.history:], c


class CausalBlock(nn.Module):
    def __init__(self, cin, cout, kernel, dilation, dropout):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.conv1 = weight_norm(nn.Conv1d(cin, cout, kernel, dilation=dilation))
        self.conv2 = weight_norm(nn.Conv1d(cout, cout, kernel, dilation=dilation))
        self.drop = nn.Dropout(dropout)
        self.skip = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.drop(F.relu(self.conv1(F.pad(x, (self.pad, 0)))))
        h = self.drop(F.relu(self.conv2(F.pad(h, (self.pad, 0)))))
        return F.relu(h + self.skip(x))


class LoadTCN(nn.Module):
    def __init__(self, cfg: RunConfig, n_clients):
        super().__init__()
        self.client = nn.Embedding(n_clients, 8)
        blocks, cin = [], 1 + 8
        for level in range(cfg.levels):
            blocks.append(CausalBlock(cin, cfg.channels, cfg.kernel, 2 ** level, cfg.dropout))
            cin = cfg.channels
        self.tcn = nn.Sequential(*blocks)
        self.readout = nn.Linear(cfg.channels, cfg.horizon)

    def forward(self, past, client):
        emb = self.client(client).unsqueeze(-1).expand(-1, -1, past.size(-1))
        h = self.tcn(torch.cat([past, emb], dim=1))
        return self.readout(h[:, :, -1])


def prepare(cfg: RunConfig):
    raw = np.load(cfg.series)
    split = int(raw.shape[1] * cfg.train_frac)
    mean = raw[:, :split].mean(axis=1, keepdims=True)
    std = raw[:, :split].std(axis=1, keepdims=True) + 1e-6
    series = (raw - mean) / std
    train = LoadWindows(series, cfg.history, cfg.horizon, 0, split)
    valid = LoadWindows(series, cfg.history, cfg.horizon, split - cfg.history, raw.shape[1])
    return train, valid, raw.shape[0]


def save_state(path, model, epoch):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"weights": model.state_dict(), "epoch": epoch}, path + ".tmp")
    os.replace(path + ".tmp", path)


def restore_state(path, model, device):
    if not os.path.exists(path):
        return 0
    state = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(state["weights"])
    return state["epoch"] + 1


def valid_mae(model, loader, device):
    model.eval()
    err, n = 0.0, 0
    with torch.no_grad():
        for past, future, client in loader:
            pred = model(past.to(device), client.to(device))
            err += (pred - future.to(device)).abs().sum().item()
            n += future.numel()
    return err / n


def main(cfg=RunConfig()):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train, valid, n_clients = prepare(cfg)
    train_loader = DataLoader(train, cfg.batch, shuffle=True, num_workers=4, drop_last=True)
    valid_loader = DataLoader(valid, 1024, num_workers=4)

    model = LoadTCN(cfg, n_clients).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    start = restore_state(cfg.checkpoint, model, device)
    if start:
        print(f"resuming at epoch {start}")

    for epoch in range(start, cfg.epochs):
        model.train()
        for past, future, client in train_loader:
            past, future, client = past.to(device), future.to(device), client.to(device)
            optimizer.zero_grad()
            loss = F.smooth_l1_loss(model(past, client), future)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
        print(f"epoch {epoch:02d} valid MAE (normalised) {valid_mae(model, valid_loader, device):.4f}")
        save_state(cfg.checkpoint, model, epoch)


if __name__ == "__main__":
    main()
