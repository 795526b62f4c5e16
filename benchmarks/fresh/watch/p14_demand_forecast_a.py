"""Forecast next-day demand from lagged features, with a recency-weighted squared error."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny model: one thread is fastest
np.random.seed(0)

LAGS = 7


class DemandHistory(Dataset):
    def __init__(self, days):
        t = np.arange(days + LAGS)
        series = 10 + 3 * np.sin(2 * np.pi * t / 7) + 0.05 * t + np.random.normal(0, 0.5, size=t.shape)
        windows = np.stack([series[i : i + LAGS] for i in range(days)])
        self.x = torch.tensor((windows - 10) / 3, dtype=torch.float32)
        self.y = torch.tensor((series[LAGS:] - 10) / 3, dtype=torch.float32)  # shape (days,)
        self.recency = torch.linspace(0.5, 1.5, days)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i], self.recency[i]


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(LAGS, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def weighted_mse(pred, target, weight):
    return (weight * (pred - target) ** 2).mean()


def main():
    data = DemandHistory(600)
    train, val = torch.utils.data.random_split(data, [500, 100], generator=torch.Generator().manual_seed(0))
    train_loader = DataLoader(train, batch_size=50, shuffle=True)
    val_loader = DataLoader(val, batch_size=100)
    model = Forecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    for epoch in range(10):
        model.train()
        for x, y, w in train_loader:
            optimizer.zero_grad()
            loss = weighted_mse(model(x), y, w)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            x, y, _ = next(iter(val_loader))
            val_mse = (model(x).reshape(-1) - y).pow(2).mean().item()
        print(f"epoch {epoch}  train loss {loss.item():.4f}  val mse {val_mse:.4f}")


if __name__ == "__main__":
    main()
