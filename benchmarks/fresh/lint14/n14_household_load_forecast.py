import copy
import csv
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


@dataclass
class ForecastConfig:
    csv_path: str = "data/household_power/hourly.csv"
    context: int = 168
    horizon: int = 24
    hidden: int = 96
    batch_size: int = 128
    epochs: int = 50
    lr: float = 1e-3
    patience: int = 6
    seed: int = 21
    out: str = "runs/household_load"


def read_series(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    load = np.array([float(r["global_active_power"]) for r in rows], dtype=np.float32)
    hour = np.array([int(r["hour"]) for r in rows])
    dow = np.array([int(r["weekday"]) for r in rows])
    calendar = np.stack([np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24),
                         np.sin(2 * np.pi * dow / 7), np.cos(2 * np.pi * dow / 7)], axis=1).astype(np.float32)
    return load, calendar


class Windows(Dataset):
    def __init__(self, load, calendar, start, stop, context, horizon):
        self.load = torch.from_numpy(load)
        self.calendar = torch.from_numpy(calendar)
        self.starts = list(range(start, stop - context - horizon + 1))
        self.context, self.horizon = context, horizon

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, index):
        s = self.starts[index]
        c, h = self.context, self.horizon
        past = torch.cat([self.load[s:s + c, None], self.calendar[s:s + c]], dim=1)
        future_calendar = self.calendar[s + c:s + c + h]
        return past, future_calendar, self.load[s + c:s + c + h]


class TwoWayEncoder(nn.Module):
    def __init__(self, inputs, hidden):
        super().__init__()
        self.forward_rnn = nn.GRU(inputs, hidden, batch_first=True)
        self.backward_rnn = nn.GRU(inputs, hidden, batch_first=True)

    def forward(self, x):
        fwd, _ = self.forward_rnn(x)
        bwd, _ = self.backward_rnn(x[:, ::-1])
        bwd = bwd[:, ::-1]
        return torch.cat([fwd, bwd], dim=-1)


class LoadForecaster(nn.Module):
    def __init__(self, hidden, horizon):
        super().__init__()
        self.encoder = TwoWayEncoder(5, hidden)
        self.attn = nn.Linear(2 * hidden, 1)
        self.decoder = nn.Sequential(nn.Linear(2 * hidden + 4 * horizon, 256), nn.ReLU(), nn.Linear(256, horizon))

    def forward(self, past, future_calendar):
        states = self.encoder(past)
        weights = torch.softmax(self.attn(states), dim=1)
        summary = (weights * states).sum(dim=1)
        return self.decoder(torch.cat([summary, future_calendar.flatten(1)], dim=1))


def run(model, loader, device, optimizer=None):
    model.train(optimizer is not None)
    total, count = 0.0, 0
    with torch.set_grad_enabled(optimizer is not None):
        for past, cal, target in loader:
            past, cal, target = past.to(device), cal.to(device), target.to(device)
            loss = nn.functional.l1_loss(model(past, cal), target)
            if optimizer is not None:
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
            total += loss.item() * target.size(0)
            count += target.size(0)
    return total / count


def main(cfg=ForecastConfig()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    load, calendar = read_series(cfg.csv_path)
    n = len(load)
    train_end, val_end = int(n * 0.7), int(n * 0.85)
    mean, std = load[:train_end].mean(), load[:train_end].std()
    load = (load - mean) / std
    make = lambda a, b: Windows(load, calendar, a, b, cfg.context, cfg.horizon)
    train_loader = DataLoader(make(0, train_end), batch_size=cfg.batch_size, shuffle=True)
    val_loader = DataLoader(make(train_end - cfg.context, val_end), batch_size=512)
    test_loader = DataLoader(make(val_end - cfg.context, n), batch_size=512)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = LoadForecaster(cfg.hidden, cfg.horizon).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)
    best, best_state, waited = float("inf"), None, 0
    for epoch in range(cfg.epochs):
        train_mae = run(model, train_loader, device, optimizer)
        val_mae = run(model, val_loader, device)
        scheduler.step(val_mae)
        print(f"epoch {epoch:02d} train {train_mae:.4f} val {val_mae:.4f}")
        if val_mae < best:
            best, best_state, waited = val_mae, copy.deepcopy(model.state_dict()), 0
        else:
            waited += 1
            if waited >= cfg.patience:
                break
    model.load_state_dict(best_state)
    test_mae = run(model, test_loader, device) * float(std)
    print(f"test MAE {test_mae:.3f} kW")
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "mean": float(mean), "std": float(std)}, Path(cfg.out) / "best.pt")


if __name__ == "__main__":
    main()
