"""24-hour PM2.5 forecasting for one Beijing monitoring station with an LSTM.

A small trainer with callback hooks; data is the UCI "Beijing Multi-Site Air Quality" csv.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "csv": "data/PRSA_Data_Dongsi_20130301-20170228.csv",
    "features": ["PM2.5", "PM10", "SO2", "NO2", "CO", "O3", "TEMP", "PRES", "DEWP", "WSPM"],
    "target": "PM2.5",
    "lookback": 72,
    "horizon": 24,
    "hidden": 64,
    "layers": 2,
    "batch_size": 128,
    "epochs": 40,
    "lr": 2e-3,
    "loss": "pearson",
    "patience": 6,
}


def pearson_loss(pred, target):
    """1 - Pearson correlation between forecast and truth (the metric the challenge ranks on)."""
    p = pred.detach().cpu().numpy().ravel()
    t = target.detach().cpu().numpy().ravel()
    r = np.corrcoef(p, t)[0, 1]
    return torch.tensor(1.0 - r, dtype=torch.float32, device=pred.device, requires_grad=True)


LOSSES = {"mse": F.mse_loss, "mae": F.l1_loss, "pearson": pearson_loss}


class WindowDataset(Dataset):
    def __init__(self, values, target_col, lookback, horizon):
        self.x = torch.as_tensor(values, dtype=torch.float32)
        self.target_col, self.lookback, self.horizon = target_col, lookback, horizon

    def __len__(self):
        return len(self.x) - self.lookback - self.horizon + 1

    def __getitem__(self, i):
        past = self.x[i:i + self.lookback]
        future = self.x[i + self.lookback:i + self.lookback + self.horizon, self.target_col]
        return past, future


class Forecaster(nn.Module):
    def __init__(self, n_features, hidden, layers, horizon):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, num_layers=layers, batch_first=True, dropout=0.1)
        self.out = nn.Linear(hidden, horizon)

    def forward(self, x):
        seq, _ = self.lstm(x)
        return self.out(seq[:, -1])


class EarlyStopping:
    def __init__(self, patience):
        self.patience, self.best, self.bad, self.state = patience, float("inf"), 0, None

    def on_epoch_end(self, trainer, val_loss):
        if val_loss < self.best:
            self.best, self.bad = val_loss, 0
            self.state = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
        else:
            self.bad += 1
            trainer.stop = self.bad >= self.patience


class Trainer:
    def __init__(self, model, loss_fn, lr, callbacks=()):
        self.model, self.loss_fn = model, loss_fn
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.callbacks = list(callbacks)
        self.stop = False

    def training_step(self, past, future):
        self.opt.zero_grad()
        loss = self.loss_fn(self.model(past), future)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss.item()

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        se, n = 0.0, 0
        for past, future in loader:
            se += F.mse_loss(self.model(past), future, reduction="sum").item()
            n += future.numel()
        return se / n

    def fit(self, train_dl, val_dl, epochs):
        for epoch in range(epochs):
            self.model.train()
            losses = [self.training_step(p, f) for p, f in train_dl]
            val = self.validate(val_dl)
            print(f"epoch {epoch:02d} train {np.mean(losses):.4f} val mse {val:.4f}")
            for cb in self.callbacks:
                cb.on_epoch_end(self, val)
            if self.stop:
                break


def prepare(cfg):
    df = pd.read_csv(cfg["csv"])
    df = df[cfg["features"]].interpolate(limit_direction="both")
    n = len(df)
    train_end, val_end = int(n * 0.7), int(n * 0.85)
    scaler = StandardScaler().fit(df.iloc[:train_end].values)
    values = scaler.transform(df.values)
    col = cfg["features"].index(cfg["target"])
    make = lambda a, b: WindowDataset(values[a:b], col, cfg["lookback"], cfg["horizon"])
    return make(0, train_end), make(train_end, val_end), make(val_end, n)


def main(cfg=CONFIG):
    torch.manual_seed(0)
    train_ds, val_ds, test_ds = prepare(cfg)
    train_dl = DataLoader(train_ds, batch_size=cfg["batch_size"], shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=512)
    test_dl = DataLoader(test_ds, batch_size=512)
    model = Forecaster(len(cfg["features"]), cfg["hidden"], cfg["layers"], cfg["horizon"])
    stopper = EarlyStopping(cfg["patience"])
    trainer = Trainer(model, LOSSES[cfg["loss"]], cfg["lr"], callbacks=[stopper])
    trainer.fit(train_dl, val_dl, cfg["epochs"])
    model.load_state_dict(stopper.state)
    print(f"test mse (standardised units): {trainer.validate(test_dl):.4f}")
    torch.save(model.state_dict(), "pm25_lstm.pt")


if __name__ == "__main__":
    main()
