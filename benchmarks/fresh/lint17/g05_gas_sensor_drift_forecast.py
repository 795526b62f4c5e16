"""Forecast the next readings of a 16-channel metal-oxide gas sensor array over months of drift.

Each recording is one long multichannel stream. The model reads it in consecutive windows and
keeps its recurrent state from one window to the next, so that slow drift is carried along.
"""
import json
import random
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

CONFIG = {
    "streams": "data/gas_streams.npz",
    "window": 128,
    "horizon": 8,
    "hidden": 96,
    "layers": 2,
    "lr": 2e-3,
    "clip": 1.0,
    "epochs": 15,
    "seed": 3,
    "out": "runs/gas_drift",
}


class DriftForecaster(nn.Module):
    def __init__(self, channels, hidden, layers, horizon):
        super().__init__()
        self.horizon = horizon
        self.inp = nn.Linear(channels, hidden)
        self.rnn = nn.LSTM(hidden, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, channels * horizon)
        self.state = None

    def reset(self):
        self.state = None

    def forward(self, x):
        out, self.state = self.rnn(torch.tanh(self.inp(x)), self.state)
        pred = self.head(out)
        return pred.view(x.size(0), x.size(1), self.horizon, x.size(2))


def make_targets(stream, horizon):
    steps = stream.shape[0] - horizon
    idx = torch.arange(steps).unsqueeze(1) + torch.arange(1, horizon + 1).unsqueeze(0)
    return stream[:steps], stream[idx]


def windows(inputs, targets, size):
    for start in range(0, inputs.shape[0] - size + 1, size):
        yield inputs[start:start + size], targets[start:start + size]


def run_stream(model, stream, cfg, optimizer=None):
    inputs, targets = make_targets(stream, cfg["horizon"])
    model.reset()
    total, n = 0.0, 0
    for x, y in windows(inputs, targets, cfg["window"]):
        pred = model(x.unsqueeze(0))
        loss = nn.functional.mse_loss(pred, y.unsqueeze(0))
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
            optimizer.step()
        total += loss.item()
        n += 1
    return total / max(n, 1)


def load_streams(path, device):
    data = np.load(path)
    train = [torch.from_numpy(data[k]).float().to(device) for k in sorted(data.files) if k.startswith("train")]
    valid = [torch.from_numpy(data[k]).float().to(device) for k in sorted(data.files) if k.startswith("valid")]
    stacked = torch.cat(train)
    mean, std = stacked.mean(0), stacked.std(0) + 1e-6
    norm = lambda s: (s - mean) / std
    return [norm(s) for s in train], [norm(s) for s in valid], mean, std


def main(cfg):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train, valid, mean, std = load_streams(cfg["streams"], device)
    model = DriftForecaster(train[0].shape[1], cfg["hidden"], cfg["layers"], cfg["horizon"]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.0)
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)
    history = []
    for epoch in range(cfg["epochs"]):
        model.train()
        random.shuffle(train)
        train_loss = sum(run_stream(model, s, cfg, optimizer) for s in train) / len(train)
        model.eval()
        with torch.no_grad():
            valid_loss = sum(run_stream(model, s, cfg) for s in valid) / len(valid)
        history.append({"epoch": epoch, "train": train_loss, "valid": valid_loss})
        print(f"epoch {epoch} train {train_loss:.4f} valid {valid_loss:.4f}")
    torch.save({"model": model.state_dict(), "mean": mean.cpu(), "std": std.cpu(), "config": cfg},
               out / "forecaster.pt")
    (out / "history.json").write_text(json.dumps(history, indent=1))


if __name__ == "__main__":
    overrides = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    main({**CONFIG, **overrides})
