"""County-level maize yield (bu/acre) from growing-season weather, soil and management features.

yield_features.csv: one row per county-year with weekly GDD/precipitation/VPD aggregates,
soil properties, planting date and the reported yield. Years up to 2017 train, 2018 validates,
2019-2020 test, as in the crop-modelling group's benchmark.
"""
import copy
import random

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

SETTINGS = {
    "csv": "data/yield_features.csv",
    "target": "yield_bu_acre",
    "drop": ["fips", "state", "county", "year"],
    "val_year": 2018,
    "test_years": [2019, 2020],
    "hidden": [256, 128, 64],
    "dropout": 0.2,
    "batch_size": 256,
    "max_epochs": 400,
    "lr": 1e-3,
    "early_stop": 30,
    "seed": 1,
}


def make_mlp(n_in, hidden, dropout):
    layers, d = [], n_in
    for h in hidden:
        layers += [nn.Linear(d, h), nn.ReLU(), nn.Dropout(dropout)]
        d = h
    layers.append(nn.Linear(d, 1))
    return nn.Sequential(*layers)


def to_dataset(frame, features, target, scaler, y_mean, y_std):
    x = scaler.transform(frame[features].to_numpy()).astype(np.float32)
    y = ((frame[target].to_numpy() - y_mean) / y_std).astype(np.float32)
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y))


def rmse(model, loader, y_std, device):
    model.eval()
    sq, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).squeeze(-1)
            sq += ((pred - y.to(device)) ** 2).sum().item()
            n += y.numel()
    return float(np.sqrt(sq / n) * y_std)


def main(s=SETTINGS):
    random.seed(s["seed"])
    np.random.seed(s["seed"])
    torch.manual_seed(s["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    df = pd.read_csv(s["csv"]).dropna(subset=[s["target"]])
    features = [c for c in df.columns if c not in s["drop"] + [s["target"]]]
    df[features] = df[features].fillna(df[df["year"] < s["val_year"]][features].median())
    train_df = df[df["year"] < s["val_year"]]
    val_df = df[df["year"] == s["val_year"]]
    test_df = df[df["year"].isin(s["test_years"])]

    scaler = StandardScaler().fit(train_df[features].to_numpy())
    y_mean, y_std = float(train_df[s["target"]].mean()), float(train_df[s["target"]].std())
    train_loader = DataLoader(to_dataset(train_df, features, s["target"], scaler, y_mean, y_std),
                              batch_size=s["batch_size"], shuffle=True)
    val_loader = DataLoader(to_dataset(val_df, features, s["target"], scaler, y_mean, y_std), batch_size=1024)
    test_loader = DataLoader(to_dataset(test_df, features, s["target"], scaler, y_mean, y_std), batch_size=1024)

    model = make_mlp(len(features), s["hidden"], s["dropout"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=s["lr"])
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=8,
                                                           min_lr=1e-5, verbose=True)
    loss_fn = nn.HuberLoss(delta=1.0)

    best_rmse, best_state, stale = float("inf"), None, 0
    for epoch in range(s["max_epochs"]):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x).squeeze(-1), y)
            loss.backward()
            optimizer.step()

        val_rmse = rmse(model, val_loader, y_std, device)
        scheduler.step(val_rmse)
        if val_rmse < best_rmse - 1e-3:
            best_rmse, best_state, stale = val_rmse, copy.deepcopy(model.state_dict()), 0
        else:
            stale += 1
        if epoch % 20 == 0:
            print(f"epoch {epoch:3d}  val RMSE {val_rmse:.2f} bu/acre")
        if stale >= s["early_stop"]:
            break

    model.load_state_dict(best_state)
    print(f"stopped after {epoch + 1} epochs; val RMSE {best_rmse:.2f}, "
          f"test RMSE {rmse(model, test_loader, y_std, device):.2f} bu/acre")
    torch.save({"model": model.state_dict(), "features": features,
                "scaler_mean": torch.tensor(scaler.mean_, dtype=torch.float32),
                "scaler_scale": torch.tensor(scaler.scale_, dtype=torch.float32),
                "y_mean": y_mean, "y_std": y_std}, "yield_mlp.pt")


if __name__ == "__main__":
    main()
