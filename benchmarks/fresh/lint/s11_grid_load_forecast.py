"""Multi-step load forecasting for a power grid with a GRU encoder (hourly data)."""
import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

WINDOW, HORIZON = 168, 24


class SlidingWindows(Dataset):
    def __init__(self, series, covariates):
        self.series = torch.as_tensor(series, dtype=torch.float32)
        self.cov = torch.as_tensor(covariates, dtype=torch.float32)

    def __len__(self):
        return len(self.series) - WINDOW - HORIZON

    def __getitem__(self, i):
        past = torch.cat([self.series[i : i + WINDOW, None], self.cov[i : i + WINDOW]], dim=1)
        future = self.series[i + WINDOW : i + WINDOW + HORIZON]
        return past, future


class Forecaster(nn.Module):
    def __init__(self, n_in, hidden=128, horizon=HORIZON):
        super().__init__()
        self.encoder = nn.GRU(n_in, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.proj = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, horizon))

    def forward(self, past):
        _, h = self.encoder(past)
        return self.proj(h[-1])


def prepare(path):
    df = pd.read_csv(path, parse_dates=["timestamp"]).set_index("timestamp")
    load = df["load_mw"].to_numpy()
    mu, sigma = load.mean(), load.std()
    hour = df.index.hour.to_numpy()
    cov = np.stack([np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24), df["temp_c"].to_numpy() / 40.0], 1)
    return (load - mu) / sigma, cov


def main():
    series, cov = prepare("grid_load.csv")
    split = int(0.85 * len(series))
    train_dl = DataLoader(SlidingWindows(series[:split], cov[:split]), batch_size=64, shuffle=True, drop_last=True)
    val_dl = DataLoader(SlidingWindows(series[split:], cov[split:]), batch_size=256)

    model = Forecaster(n_in=1 + cov.shape[1])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)  # halve every 10 epochs
    loss_fn = nn.HuberLoss(delta=1.0)

    for epoch in range(50):
        model.train()
        for past, future in train_dl:
            optimizer.zero_grad()
            loss = loss_fn(model(past), future)
            loss.backward()
            optimizer.step()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scheduler.step()

        model.eval()
        with torch.no_grad():
            errs = [torch.mean(torch.abs(model(p) - f)).item() for p, f in val_dl]
        print(f"epoch {epoch:02d}  train {loss.item():.4f}  val MAE {np.mean(errs):.4f}  lr {scheduler.get_last_lr()[0]:.2e}")

    torch.save(model.state_dict(), "gru_forecaster.pt")


if __name__ == "__main__":
    main()
