import json
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import gradcheck

SETUP = {
    "csv": "data/county_crop_yield.csv",
    "features": ["gdd", "precip_mm", "soil_om", "soil_ph", "n_rate", "planting_doy", "ndvi_peak"],
    "rain_features": ["precip_mm"],
    "target": "yield_t_ha",
    "export": "export/crop_yield",
    "hidden": 96,
    "epochs": 40,
    "batch": 256,
    "lr": 2e-3,
}


class FlooredLog(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, floor):
        ctx.save_for_backward(x)
        ctx.floor = floor
        return torch.log(x.clamp_min(floor))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (x > ctx.floor).to(x.dtype) / x.clamp_min(ctx.floor), None


def check_floored_log():
    x = (torch.rand(12, dtype=torch.float64) * 5 + 0.5).requires_grad_()
    assert gradcheck(lambda t: FlooredLog.apply(t, 0.1), (x,), eps=1e-6, atol=1e-8)


class YieldModel(nn.Module):
    def __init__(self, n_features, log_columns, hidden):
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))
        self.register_buffer("log_mask", torch.zeros(n_features, dtype=torch.bool))
        self.log_mask[log_columns] = True
        self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.GELU(), nn.Dropout(0.1),
                                 nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def transform(self, x):
        return torch.where(self.log_mask, FlooredLog.apply(x, 0.1), x)

    @torch.no_grad()
    def fit_scaler(self, x):
        z = self.transform(x)
        self.mean.copy_(z.mean(0))
        self.std.copy_(z.std(0).clamp_min(1e-6))

    def forward(self, x):
        return self.net((self.transform(x) - self.mean) / self.std).squeeze(-1)


def load_table(cfg):
    df = pd.read_csv(cfg["csv"]).dropna(subset=cfg["features"] + [cfg["target"]])
    x = torch.tensor(df[cfg["features"]].to_numpy(dtype=np.float32))
    y = torch.tensor(df[cfg["target"]].to_numpy(dtype=np.float32))
    years = df["year"].to_numpy()
    return x, y, years


def train(model, x, y, cfg):
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        model.train()
        for idx in torch.randperm(len(x)).split(cfg["batch"]):
            loss = F.huber_loss(model(x[idx]), y[idx], delta=1.0)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def export_and_verify(model, cfg, probe):
    os.makedirs(cfg["export"], exist_ok=True)
    path = os.path.join(cfg["export"], "model.pt")
    torch.save(model.state_dict(), path)
    with open(os.path.join(cfg["export"], "schema.json"), "w") as fh:
        json.dump({"features": cfg["features"], "rain_features": cfg["rain_features"], "hidden": cfg["hidden"]}, fh)
    log_columns = [cfg["features"].index(c) for c in cfg["rain_features"]]
    restored = YieldModel(len(cfg["features"]), log_columns, cfg["hidden"])
    restored.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    model.eval()
    restored.eval()
    with torch.no_grad():
        torch.testing.assert_close(restored(probe), model(probe), rtol=0.0, atol=0.0)
    return path


def main(cfg=SETUP):
    torch.manual_seed(0)
    check_floored_log()
    x, y, years = load_table(cfg)
    test = torch.from_numpy(years == years.max())
    log_columns = [cfg["features"].index(c) for c in cfg["rain_features"]]
    model = YieldModel(len(cfg["features"]), log_columns, cfg["hidden"])
    model.fit_scaler(x[~test])
    train(model, x[~test], y[~test], cfg)
    model.eval()
    with torch.no_grad():
        pred = model(x[test])
    rmse = torch.sqrt(F.mse_loss(pred, y[test])).item()
    r2 = 1 - ((pred - y[test]) ** 2).sum().item() / ((y[test] - y[test].mean()) ** 2).sum().item()
    print(f"held-out year {years.max()}: RMSE {rmse:.3f} t/ha, R^2 {r2:.3f}")
    print("exported to", export_and_verify(model, cfg, x[test][:64]))


if __name__ == "__main__":
    main()
