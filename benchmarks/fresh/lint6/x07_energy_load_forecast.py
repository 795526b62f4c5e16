"""Day-ahead electricity load forecasting for one substation: predict the load 24 hours after
the end of a one-week window of hourly load and weather readings."""

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

WINDOW, HORIZON = 168, 24
FEATURES = ["load_mw", "temp_c", "humidity", "is_holiday", "hour_sin", "hour_cos"]


class LoadWindows(Dataset):
    def __init__(self, frame, stats):
        values = frame[FEATURES].to_numpy(np.float32)
        self.x = (values - stats["mean"]) / stats["std"]
        self.y = self.x[:, 0]  # normalised load
        self.starts = np.arange(len(frame) - WINDOW - HORIZON)

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        window = torch.from_numpy(self.x[s:s + WINDOW])          # (WINDOW, features)
        target = torch.tensor(self.y[s + WINDOW + HORIZON - 1])  # scalar load
        return window, target


class TemporalConvNet(nn.Module):
    def __init__(self, n_feat, channels=64):
        super().__init__()
        layers, c_in = [], n_feat
        for dilation in (1, 2, 4, 8, 16, 32):
            layers += [nn.Conv1d(c_in, channels, 3, padding=dilation, dilation=dilation), nn.GELU()]
            c_in = channels
        self.tcn = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(channels, 64), nn.GELU(), nn.Linear(64, 1))

    def forward(self, x):  # x: (B, WINDOW, features)
        h = self.tcn(x.transpose(1, 2))  # (B, channels, WINDOW)
        return self.head(h[:, :, -1])


def split(frame):
    cut = int(len(frame) * 0.85)
    return frame.iloc[:cut], frame.iloc[cut - WINDOW - HORIZON:]


def main():
    frame = pd.read_csv("data/substation_17_hourly.csv", parse_dates=["timestamp"]).sort_values("timestamp")
    train_frame, val_frame = split(frame)
    stats = {"mean": train_frame[FEATURES].to_numpy(np.float32).mean(0),
             "std": train_frame[FEATURES].to_numpy(np.float32).std(0) + 1e-6}
    train_dl = DataLoader(LoadWindows(train_frame, stats), batch_size=256, shuffle=True, num_workers=2)
    val_dl = DataLoader(LoadWindows(val_frame, stats), batch_size=512)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TemporalConvNet(len(FEATURES)).to(device)
    criterion = nn.L1Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    # halve the learning rate every 10 epochs
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)

    for epoch in range(60):
        model.train()
        train_mae, n = 0.0, 0
        for window, target in train_dl:
            window, target = window.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(window), target)
            loss.backward()
            optimizer.step()
            scheduler.step()
            train_mae += loss.item() * target.size(0)
            n += target.size(0)

        model.eval()
        errors = []
        with torch.no_grad():
            for window, target in val_dl:
                pred = model(window.to(device)).squeeze(-1).cpu()
                errors.append((pred - target).abs())
        val_mae = torch.cat(errors).mean().item() * stats["std"][0]
        print(f"epoch {epoch:02d} train MAE {train_mae / n:.4f} (norm.)  val MAE {val_mae:.2f} MW "
              f"lr {optimizer.param_groups[0]['lr']:.2e}")

    torch.save(model.state_dict(), "tcn_load_forecast.pt")


if __name__ == "__main__":
    main()
