# %% [markdown]
# # Next-day temperature from the Jena weather station
# Hourly averages of the 10-minute records (2009-2016). 72 hours of 14 variables in, the next
# 24 hourly temperatures out. Chronological split: 2009-2014 train, 2015 validation, 2016 test.

# %%
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(4)
IN_HOURS, OUT_HOURS, BATCH, EPOCHS, LR = 72, 24, 128, 30, 1e-3

# %%
df = pd.read_csv("data/jena_climate_2009_2016.csv", parse_dates=["Date Time"], dayfirst=True)
df = df.set_index("Date Time").resample("1h").mean().interpolate(limit=6).dropna()
df.loc[df["wv (m/s)"] < 0, "wv (m/s)"] = 0.0
rad = np.deg2rad(df.pop("wd (deg)"))
df["wind_x"], df["wind_y"] = df["wv (m/s)"] * np.cos(rad), df["wv (m/s)"] * np.sin(rad)
hour = df.index.hour + df.index.minute / 60
df["hour_sin"], df["hour_cos"] = np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24)
features = ["p (mbar)", "T (degC)", "rh (%)", "VPmax (mbar)", "VPact (mbar)", "sh (g/kg)", "rho (g/m**3)",
            "wv (m/s)", "max. wv (m/s)", "wind_x", "wind_y", "hour_sin", "hour_cos", "Tdew (degC)"]
target = features.index("T (degC)")

train_df, valid_df, test_df = df[:"2014"], df["2015"], df["2016"]
mu, sigma = train_df[features].mean(), train_df[features].std()
print(len(train_df), len(valid_df), len(test_df), "hours")


# %%
class Windows(Dataset):
    def __init__(self, frame):
        self.x = torch.tensor(((frame[features] - mu) / sigma).to_numpy(), dtype=torch.float32)

    def __len__(self):
        return len(self.x) - IN_HOURS - OUT_HOURS + 1

    def __getitem__(self, i):
        past = self.x[i: i + IN_HOURS]
        future = self.x[i + IN_HOURS: i + IN_HOURS + OUT_HOURS, target]
        return past, future


loaders = {
    "train": DataLoader(Windows(train_df), BATCH, shuffle=True, drop_last=True),
    "valid": DataLoader(Windows(valid_df), 512),
    "test": DataLoader(Windows(test_df), 512),
}


# %%
class ConvLSTMForecaster(nn.Module):
    def __init__(self, n_features, hidden=128):
        super().__init__()
        self.front = nn.Sequential(weight_norm(nn.Conv1d(n_features, 64, 5, padding=2)), nn.GELU(),
                                   weight_norm(nn.Conv1d(64, 64, 5, padding=2)), nn.GELU())
        self.lstm = nn.LSTM(64, hidden, num_layers=2, batch_first=True, dropout=0.2)
        self.head = nn.Linear(hidden, OUT_HOURS)

    def forward(self, past):
        h = self.front(past.transpose(1, 2)).transpose(1, 2)
        out, _ = self.lstm(h)
        return self.head(out[:, -1])


model = ConvLSTMForecaster(len(features))
params = list(model.parameters())
optimizer = torch.optim.Adam(params, lr=LR)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=3)


def mae_degrees(loader):
    model.eval()
    err, n = 0.0, 0
    with torch.no_grad():
        for past, future in loader:
            err += (model(past) - future).abs().sum().item()
            n += future.numel()
    return err / n * sigma.iloc[target]


# %%
best, best_state = float("inf"), None
for epoch in range(EPOCHS):
    model.train()
    for past, future in loaders["train"]:
        optimizer.zero_grad()
        loss = F.huber_loss(model(past), future, delta=1.0)
        loss.backward()
        nn.utils.clip_grad_norm_(params, max_norm=1.0)
        optimizer.step()
    val = mae_degrees(loaders["valid"])
    scheduler.step(val)
    if val < best:
        best, best_state = val, {k: v.clone() for k, v in model.state_dict().items()}
    print(f"epoch {epoch:02d} valid MAE {val:.3f} degC")

# %%
model.load_state_dict(best_state)
persistence = np.mean([(f - p[-1, target]).abs().mean().item() for p, f in Windows(test_df)]) * sigma.iloc[target]
print(f"test MAE {mae_degrees(loaders['test']):.3f} degC (persistence baseline {persistence:.3f} degC)")

# %%
model.eval()
per_hour, count = torch.zeros(OUT_HOURS), 0
with torch.no_grad():
    for past, future in loaders["test"]:
        per_hour += (model(past) - future).abs().sum(dim=0)
        count += len(future)
per_hour = per_hour / count * sigma.iloc[target]
print("test MAE by lead time (h):", {h + 1: round(v, 2) for h, v in enumerate(per_hour.tolist()) if h % 6 == 5})
torch.save(best_state, "jena_forecaster.pt")
