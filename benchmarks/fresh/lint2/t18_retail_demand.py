"""Daily demand forecasting for store-item series: 56 days of history -> the next 14 days.

Training optimises weighted MAPE directly, the metric the planning team reports.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

HISTORY, HORIZON = 56, 14


class WindowSet(Dataset):
    def __init__(self, sales, scales, start, end):
        self.sales, self.scales = sales, scales  # (n_series, n_days), (n_series,)
        self.index = [(s, t) for s in range(sales.shape[0]) for t in range(start, end - HISTORY - HORIZON + 1, 7)]

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        s, t = self.index[i]
        window = torch.from_numpy(self.sales[s, t : t + HISTORY + HORIZON]) / self.scales[s]
        dow = torch.arange(t, t + HISTORY + HORIZON) % 7
        return window[:HISTORY], dow, window[HISTORY:], torch.tensor(self.scales[s])


class Forecaster(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.dow = nn.Embedding(7, 8)
        self.encoder = nn.LSTM(1 + 8, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Sequential(nn.Linear(hidden + HORIZON * 8, 256), nn.ReLU(), nn.Linear(256, HORIZON))

    def forward(self, past, dow):
        d = self.dow(dow)  # (B, HISTORY + HORIZON, 8)
        _, (h, _) = self.encoder(torch.cat([past.unsqueeze(-1), d[:, :HISTORY]], dim=-1))
        future_dow = d[:, HISTORY:].flatten(1)
        return nn.functional.softplus(self.head(torch.cat([h[-1], future_dow], dim=1)))


def wmape_loss(pred, target, weight):
    abs_err = ((pred - target).abs().sum(dim=1) * weight).sum().item()
    volume = (target.abs().sum(dim=1) * weight).sum().item()
    return torch.tensor(abs_err / max(volume, 1e-8), requires_grad=True, device=pred.device)


def load(path):
    df = pd.read_csv(path, parse_dates=["date"])
    wide = df.pivot_table(index=["store", "item"], columns="date", values="sales", fill_value=0.0)
    return wide.to_numpy(np.float32)


def main(path="data/store_item_sales.csv", epochs=20, device="cuda" if torch.cuda.is_available() else "cpu"):
    torch.manual_seed(0)
    sales = load(path)
    split = sales.shape[1] - 90
    scales = sales[:, :split].mean(axis=1) + 1.0  # per-series level, from the training period only
    train_loader = DataLoader(WindowSet(sales, scales, 0, split), batch_size=256, shuffle=True, num_workers=4)
    val_loader = DataLoader(WindowSet(sales, scales, split - HISTORY, sales.shape[1]), batch_size=1024)

    model = Forecaster().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for past, dow, future, scale in train_loader:
            past, dow, future, scale = (t.to(device) for t in (past, dow, future, scale))
            loss = wmape_loss(model(past, dow), future, scale)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        err = vol = 0.0
        with torch.no_grad():
            for past, dow, future, scale in val_loader:
                pred = model(past.to(device), dow.to(device)).cpu()
                err += ((pred - future).abs().sum(dim=1) * scale).sum().item()
                vol += (future.abs().sum(dim=1) * scale).sum().item()
        print(f"epoch {epoch}: validation WMAPE {err / vol:.4f}")
    torch.save(model.state_dict(), "demand_forecaster.pt")


if __name__ == "__main__":
    main()
