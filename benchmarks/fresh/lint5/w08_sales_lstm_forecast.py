"""Next-day unit sales per store from 28 days of history (sales, price, promo, day-of-week)."""

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FEATURES = ["units", "price", "on_promo", "dow_sin", "dow_cos"]
WINDOW = 28


def load_frame(path):
    df = pd.read_csv(path, parse_dates=["date"]).sort_values(["store_id", "date"])
    dow = df["date"].dt.dayofweek
    df["dow_sin"] = np.sin(2 * np.pi * dow / 7)
    df["dow_cos"] = np.cos(2 * np.pi * dow / 7)
    df["units"] = np.log1p(df["units"])
    return df


class SalesWindows(Dataset):
    def __init__(self, df, stats=None):
        self.series = []
        for _, g in df.groupby("store_id"):
            self.series.append(g[FEATURES].to_numpy(dtype=np.float32))
        stacked = np.concatenate(self.series)
        self.mean, self.std = stats if stats else (stacked.mean(0), stacked.std(0) + 1e-6)
        self.index = [(s, t) for s, arr in enumerate(self.series) for t in range(len(arr) - WINDOW)]

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        s, t = self.index[i]
        arr = (self.series[s] - self.mean) / self.std
        x = torch.from_numpy(arr[t : t + WINDOW])
        y = torch.tensor(arr[t + WINDOW, 0])  # next day's scaled log-units
        return x, y


class Forecaster(nn.Module):
    def __init__(self, n_features, hidden=64):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, num_layers=2, dropout=0.1)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def fit(train_df, valid_df, epochs=20, device="cpu"):
    train_ds = SalesWindows(train_df)
    valid_ds = SalesWindows(valid_df, stats=(train_ds.mean, train_ds.std))
    train_dl = DataLoader(train_ds, batch_size=256, shuffle=True, drop_last=True)
    valid_dl = DataLoader(valid_ds, batch_size=1024)

    model = Forecaster(len(FEATURES)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2)

    for epoch in range(epochs):
        model.train()
        for x, y in train_dl:
            x, target = x.to(device), y.to(device)
            pred = model(x)
            loss = (pred - target).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

        model.eval()
        abs_err, count = 0.0, 0
        with torch.no_grad():
            for x, y in valid_dl:
                pred = model(x.to(device)).squeeze(-1).cpu()
                abs_err += (pred - y).abs().sum().item()
                count += y.numel()
        val_mae = abs_err / count
        sched.step(val_mae)
        print(f"epoch {epoch:02d}  valid MAE (scaled log units) {val_mae:.4f}")
    return model


if __name__ == "__main__":
    frame = load_frame("data/store_sales.csv")
    cutoff = frame["date"].max() - pd.Timedelta(days=90)
    model = fit(frame[frame["date"] <= cutoff], frame[frame["date"] > cutoff - pd.Timedelta(days=WINDOW)])
    torch.save(model.state_dict(), "sales_lstm.pt")
