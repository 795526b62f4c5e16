import argparse
import json

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

DEFAULTS = {
    "window": 60,
    "horizon": 5,
    "rnn": {"input_size": 6, "hidden_size": 64, "num_layers": 2, "dropout": 0.2},
    "batch_size": 128,
    "epochs": 30,
    "lr": 1e-3,
}


def features_from_bars(bars):
    close = bars[:, 3]
    log_ret = np.diff(np.log(close), prepend=np.log(close[0]))
    hl_range = np.log(bars[:, 1] / bars[:, 2])
    oc = np.log(bars[:, 3] / bars[:, 0])
    log_volume = np.log1p(bars[:, 4])
    vol = np.diff(log_volume, prepend=log_volume[0])
    return np.stack([log_ret * 100, log_ret ** 2 * 1e4, hl_range * 100, oc * 100, vol, np.abs(log_ret) * 100], axis=1)


class VolWindows(Dataset):
    def __init__(self, feats, log_ret, window, horizon):
        self.feats = torch.tensor(feats, dtype=torch.float32)
        future = np.array([np.sqrt(np.sum(log_ret[t:t + horizon] ** 2)) for t in range(len(log_ret))])
        self.target = torch.tensor(np.log(future + 1e-6), dtype=torch.float32)
        self.window, self.horizon = window, horizon

    def __len__(self):
        return len(self.feats) - self.window - self.horizon

    def __getitem__(self, i):
        end = i + self.window
        return self.feats[i:end], self.target[end]


class VolForecaster(nn.Module):
    def __init__(self, rnn_cfg):
        super().__init__()
        self.rnn = nn.LSTM(**rnn_cfg)
        self.head = nn.Linear(rnn_cfg["hidden_size"], 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1]).squeeze(-1)


def split_series(path, cfg, train_frac=0.8):
    bars = np.load(path)
    feats = features_from_bars(bars)
    log_ret = np.diff(np.log(bars[:, 3]), prepend=np.log(bars[0, 3]))
    cut = int(len(bars) * train_frac)
    train = VolWindows(feats[:cut], log_ret[:cut], cfg["window"], cfg["horizon"])
    test = VolWindows(feats[cut:], log_ret[cut:], cfg["window"], cfg["horizon"])
    return train, test


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bars", default="data/spy_5min_bars.npy")
    p.add_argument("--config", default=None)
    args = p.parse_args()
    cfg = dict(DEFAULTS)
    if args.config:
        with open(args.config) as f:
            cfg.update(json.load(f))

    train_set, test_set = split_series(args.bars, cfg)
    train = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True, drop_last=True)
    test = DataLoader(test_set, batch_size=512)
    model = VolForecaster(cfg["rnn"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    for epoch in range(cfg["epochs"]):
        model.train()
        for x, y in train:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
        model.eval()
        sq, n = 0.0, 0
        with torch.no_grad():
            for x, y in test:
                sq += ((model(x) - y) ** 2).sum().item()
                n += len(y)
        print(f"epoch {epoch}: test log-vol MSE {sq / n:.4f}")
    torch.save({"model": model.state_dict(), "config": cfg}, "vol_lstm.pt")


if __name__ == "__main__":
    main()
