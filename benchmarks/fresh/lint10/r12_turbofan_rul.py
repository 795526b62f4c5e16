"""Remaining useful life of turbofan engines (NASA C-MAPSS FD001) from sensor windows."""
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CFG = {
    "train_file": "data/cmapss/train_FD001.txt",
    "test_file": "data/cmapss/test_FD001.txt",
    "rul_file": "data/cmapss/RUL_FD001.txt",
    "sensors": [2, 3, 4, 7, 8, 9, 11, 12, 13, 14, 15, 17, 20, 21],
    "window": 30,
    "rul_cap": 125,
    "valid_units": 15,
    "rnn": {"cell": "LSTM", "hidden_size": 96, "num_layers": 2, "dropout": 0.2},
    "epochs": 120,
    "batch": 256,
    "lr": 1e-3,
    "seed": 42,
}


def read_table(path, sensors):
    raw = np.loadtxt(path)
    units, cycles = raw[:, 0].astype(int), raw[:, 1].astype(int)
    return units, cycles, raw[:, [4 + s for s in sensors]].astype(np.float32)


def windows_with_targets(units, cycles, feats, window, cap, last_only=False):
    xs, ys, owners = [], [], []
    for u in np.unique(units):
        rows = feats[units == u]
        life = cycles[units == u].max()
        rul = np.minimum(life - cycles[units == u], cap).astype(np.float32)
        if len(rows) < window:
            rows = np.vstack([np.repeat(rows[:1], window - len(rows), axis=0), rows])
            rul = np.concatenate([np.full(window - len(rul), rul[0]), rul])
        ends = [len(rows)] if last_only else range(window, len(rows) + 1)
        for e in ends:
            xs.append(rows[e - window: e])
            ys.append(rul[e - 1])
            owners.append(u)
    return np.stack(xs), np.array(ys, dtype=np.float32), np.array(owners)


def make_rnn(input_size, spec):
    spec = dict(spec)
    cell = getattr(nn, spec.pop("cell"))
    return cell(input_size, **spec)


class RULRegressor(nn.Module):
    def __init__(self, n_features, spec):
        super().__init__()
        self.rnn = make_rnn(n_features, spec)
        self.head = nn.Sequential(nn.Linear(spec["hidden_size"], 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1]).squeeze(-1)


def rmse(model, loader):
    model.eval()
    sq, n = 0.0, 0
    with torch.no_grad():
        for xb, yb in loader:
            sq += ((model(xb) - yb) ** 2).sum().item()
            n += yb.numel()
    return (sq / n) ** 0.5


def main(cfg=CFG):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])

    units, cycles, feats = read_table(cfg["train_file"], cfg["sensors"])
    all_units = np.unique(units)
    valid_units = np.random.choice(all_units, cfg["valid_units"], replace=False)
    is_valid = np.isin(units, valid_units)
    lo, hi = feats[~is_valid].min(axis=0), feats[~is_valid].max(axis=0)
    scale = lambda f: (f - lo) / np.maximum(hi - lo, 1e-6)

    x_tr, y_tr, _ = windows_with_targets(units[~is_valid], cycles[~is_valid], scale(feats[~is_valid]),
                                         cfg["window"], cfg["rul_cap"])
    x_va, y_va, _ = windows_with_targets(units[is_valid], cycles[is_valid], scale(feats[is_valid]),
                                         cfg["window"], cfg["rul_cap"])
    t_units, t_cycles, t_feats = read_table(cfg["test_file"], cfg["sensors"])
    x_te, _, _ = windows_with_targets(t_units, t_cycles, scale(t_feats), cfg["window"], cfg["rul_cap"],
                                      last_only=True)
    y_te = np.minimum(np.loadtxt(cfg["rul_file"]), cfg["rul_cap"]).astype(np.float32)

    as_ds = lambda x, y: TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    train_loader = DataLoader(as_ds(x_tr, y_tr), cfg["batch"], shuffle=True, drop_last=True)
    valid_loader = DataLoader(as_ds(x_va, y_va), 1024)
    test_loader = DataLoader(as_ds(x_te, y_te), 1024)

    model = RULRegressor(len(cfg["sensors"]), cfg["rnn"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=8)
    best, best_state = float("inf"), None
    for epoch in range(cfg["epochs"]):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        val = rmse(model, valid_loader)
        scheduler.step(val)
        if val < best:
            best, best_state = val, {k: v.clone() for k, v in model.state_dict().items()}
        if epoch % 10 == 0:
            print(f"epoch {epoch:03d} valid RMSE {val:.2f}")
    model.load_state_dict(best_state)
    print(f"test RMSE {rmse(model, test_loader):.2f} (best valid {best:.2f})")


if __name__ == "__main__":
    main()
