# %% [markdown]
# # Battery state of health from a single discharge curve
# Each sample is one discharge cycle of an 18650 cell: voltage, current and temperature
# resampled to 256 points. Target: SOH = capacity / nominal capacity. Cells are held out
# whole, so the test cells were never seen during training.

# %%
import copy

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(11)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CFG = {"curves": "data/battery/curves.npy", "meta": "data/battery/cycles.csv",
       "test_cells": ["B0005", "B0018"], "val_cells": ["B0007"], "batch": 64, "epochs": 60, "lr": 2e-3,
       "noise": 0.01}

# %%
curves = np.load(CFG["curves"]).astype(np.float32)   # (n_cycles, 3, 256)
meta = pd.read_csv(CFG["meta"])                       # cell, cycle, capacity, nominal
meta["soh"] = meta["capacity"] / meta["nominal"]
is_test = meta["cell"].isin(CFG["test_cells"]).to_numpy()
is_val = meta["cell"].isin(CFG["val_cells"]).to_numpy()
is_train = ~(is_test | is_val)
print({k: int(v.sum()) for k, v in dict(train=is_train, val=is_val, test=is_test).items()})

# channel statistics from the training cells only
ch_mean = curves[is_train].mean(axis=(0, 2), keepdims=True)[0]
ch_std = curves[is_train].std(axis=(0, 2), keepdims=True)[0] + 1e-6


# %%
class CycleDataset(Dataset):
    def __init__(self, mask, augment):
        self.x = torch.from_numpy((curves[mask] - ch_mean) / ch_std)
        self.y = torch.tensor(meta.loc[mask, "soh"].to_numpy(), dtype=torch.float32)
        self.augment = augment

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        x = self.x[i]
        if self.augment:
            x = x + CFG["noise"] * torch.randn_like(x)
            x = torch.roll(x, int(torch.randint(-4, 5, (1,))), dims=-1)
        return x, self.y[i]


train_dl = DataLoader(CycleDataset(is_train, True), batch_size=CFG["batch"], shuffle=True, drop_last=True)
val_dl = DataLoader(CycleDataset(is_val, False), batch_size=256)
test_dl = DataLoader(CycleDataset(is_test, False), batch_size=256)


# %%
class SOHNet(nn.Module):
    def __init__(self):
        super().__init__()
        def block(i, o):
            return nn.Sequential(nn.Conv1d(i, o, 5, padding=2, bias=False), nn.BatchNorm1d(o), nn.GELU(), nn.MaxPool1d(2))
        self.features = nn.Sequential(block(3, 32), block(32, 64), block(64, 64), block(64, 128), nn.AdaptiveAvgPool1d(1))
        self.regressor = nn.Sequential(nn.Flatten(), nn.Linear(128, 64), nn.GELU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.regressor(self.features(x)).squeeze(-1)


model = SOHNet().to(DEVICE)
optimizer = torch.optim.Adam(model.parameters(), lr=CFG["lr"])
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=CFG["epochs"])


# %%
def rmse(loader):
    model.eval()
    se, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(DEVICE))
            se += F.mse_loss(pred, y.to(DEVICE), reduction="sum").item()
            n += y.numel()
    return (se / n) ** 0.5


best_rmse, best_state = float("inf"), None
for epoch in range(CFG["epochs"]):
    model.train()
    total, n = 0.0, 0
    for x, y in train_dl:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * y.numel()
        n += y.numel()
    scheduler.step()
    val = rmse(val_dl)
    if val < best_rmse:
        best_rmse, best_state = val, copy.deepcopy(model.state_dict())
    if epoch % 5 == 0:
        print(f"epoch {epoch:02d} train rmse {(total / n) ** 0.5:.4f} val rmse {val:.4f}")

# %%
model.load_state_dict(best_state)
print(f"best val RMSE {best_rmse:.4f}  test RMSE {rmse(test_dl):.4f}")
torch.save(best_state, "soh_cnn.pt")

# %% [markdown]
# Per-cell error on the held-out cells.

# %%
model.eval()
with torch.no_grad():
    preds = torch.cat([model(x.to(DEVICE)).cpu() for x, _ in test_dl]).numpy()
report = meta.loc[is_test, ["cell", "cycle", "soh"]].assign(pred=preds)
report["abs_err"] = (report["pred"] - report["soh"]).abs()
print(report.groupby("cell")["abs_err"].describe())
