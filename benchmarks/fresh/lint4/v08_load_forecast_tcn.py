"""Day-ahead electricity load forecasting for 370 clients with a temporal convolution network.

Input: 7 days of 15-minute readings plus calendar features; output: the next 96 readings.
"""

import numpy as np
import torch
from torch import nn
from torch.nn.utils import weight_norm
from torch.utils.data import DataLoader, Dataset

LOOKBACK, HORIZON = 7 * 96, 96


class Windows(Dataset):
    def __init__(self, series, calendar, start, stop):
        self.series, self.calendar = series, calendar
        self.origins = np.arange(start + LOOKBACK, stop - HORIZON, 24)

    def __len__(self):
        return len(self.origins)

    def __getitem__(self, i):
        t = self.origins[i]
        past = np.concatenate([self.series[t - LOOKBACK:t, None], self.calendar[t - LOOKBACK:t]], axis=1)
        return torch.from_numpy(past.astype(np.float32)), torch.from_numpy(self.series[t:t + HORIZON].astype(np.float32))


class Chomp(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, x):
        return x[..., :-self.size]


class TemporalBlock(nn.Module):
    def __init__(self, c_in, c_out, kernel, dilation, dropout=0.1):
        super().__init__()
        pad = (kernel - 1) * dilation
        self.net = nn.Sequential(
            weight_norm(nn.Conv1d(c_in, c_out, kernel, padding=pad, dilation=dilation)),
            Chomp(pad), nn.ReLU(), nn.Dropout(dropout),
            weight_norm(nn.Conv1d(c_out, c_out, kernel, padding=pad, dilation=dilation)),
            Chomp(pad), nn.ReLU(), nn.Dropout(dropout),
        )
        self.skip = nn.Conv1d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x):
        return torch.relu(self.net(x) + self.skip(x))


class TCNForecaster(nn.Module):
    def __init__(self, n_features, mean, std, load_scale, channels=64, levels=8, kernel=3):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.load_shift, self.load_scale = load_scale
        blocks, c = [], n_features
        for i in range(levels):
            blocks.append(TemporalBlock(c, channels, kernel, dilation=2 ** i))
            c = channels
        self.tcn = nn.Sequential(*blocks)
        self.head = nn.Linear(channels, HORIZON)

    def forward(self, past):
        z = (past - self.mean) / self.std
        h = self.tcn(z.transpose(1, 2))
        return self.head(h[:, :, -1]) * self.load_scale + self.load_shift


def feature_stats(loader):
    chunks = [past for past, _ in loader]
    stacked = torch.stack(chunks)
    return stacked.mean(dim=(0, 1)), stacked.std(dim=(0, 1)) + 1e-6


def main(path="data/ld2011_2014.npz", client=0, epochs=30):
    raw = np.load(path)
    series = raw["load"][:, client].astype(np.float64)
    calendar = raw["calendar"]
    cut = int(0.8 * len(series))
    train_dl = DataLoader(Windows(series, calendar, 0, cut), batch_size=64, shuffle=True, drop_last=True)
    test_dl = DataLoader(Windows(series, calendar, cut - LOOKBACK, len(series)), batch_size=256)

    mean, std = feature_stats(train_dl)
    load_scale = (float(series[:cut].mean()), float(series[:cut].std()))
    model = TCNForecaster(1 + calendar.shape[1], mean, std, load_scale)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for past, future in train_dl:
            opt.zero_grad()
            loss = nn.functional.l1_loss(model(past), future)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            abs_err = torch.cat([(model(p) - f).abs() for p, f in test_dl])
        print(f"epoch {epoch:2d}  test MAE {abs_err.mean():.2f} kW  (h+1 {abs_err[:, 0].mean():.2f}, "
              f"h+96 {abs_err[:, -1].mean():.2f})")
    torch.save(model.state_dict(), f"tcn_client{client}.pt")


if __name__ == "__main__":
    main()
