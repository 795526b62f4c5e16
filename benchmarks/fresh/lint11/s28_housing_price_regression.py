"""California housing (1990 census block groups): median house value from 8 features plus a
learned embedding of the ocean-proximity category, with an MLP; reports RMSE in dollars.
"""
import argparse
import copy
import random

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset

NUMERIC = ["longitude", "latitude", "housing_median_age", "total_rooms", "total_bedrooms", "population",
           "households", "median_income"]
PROXIMITY = ["<1H OCEAN", "INLAND", "ISLAND", "NEAR BAY", "NEAR OCEAN"]


class HousingNet(nn.Module):
    def __init__(self, n_numeric, n_categories, emb_dim=4, hidden=128):
        super().__init__()
        self.cat_embed = nn.Embedding(n_categories, emb_dim)
        self.mlp = nn.Sequential(
            nn.Linear(n_numeric + emb_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, numeric, category):
        return self.mlp(torch.cat([numeric, self.cat_embed(category)], dim=1)).squeeze(-1)


def prepare(df, stats=None):
    num = df[NUMERIC].copy()
    for col in ["total_rooms", "total_bedrooms", "population", "households"]:
        num[col] = np.log1p(num[col])
    x = num.to_numpy(np.float32)
    if stats is None:
        stats = (np.nanmean(x, axis=0), np.nanstd(x, axis=0) + 1e-6)
    x = np.nan_to_num((x - stats[0]) / stats[1]).astype(np.float32)
    cat = df["ocean_proximity"].map({c: i for i, c in enumerate(PROXIMITY)}).to_numpy(np.int64)
    y = np.log(df["median_house_value"].to_numpy(np.float32))
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(cat), torch.from_numpy(y)), stats


def predict(model, loader, device):
    model.eval()
    preds, targets = [], []
    with torch.no_grad():
        for x, c, y in loader:
            preds.append(model(x.to(device), c.to(device)).cpu())
            targets.append(y)
    return torch.cat(preds), torch.cat(targets)


def rmse_dollars(pred_log, target_log):
    return torch.sqrt(torch.mean((torch.exp(pred_log) - torch.exp(target_log)) ** 2)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/housing.csv")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=8)
    args = ap.parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    df = pd.read_csv(args.csv)
    df = df[df["median_house_value"] < 500001]
    train_df, test_df = train_test_split(df, test_size=0.15, random_state=args.seed)
    train_df, val_df = train_test_split(train_df, test_size=0.15, random_state=args.seed)
    train_set, stats = prepare(train_df)
    val_set, _ = prepare(val_df, stats)
    test_set, _ = prepare(test_df, stats)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=1024)
    test_loader = DataLoader(test_set, batch_size=1024)

    model = HousingNet(len(NUMERIC), len(PROXIMITY)).to(device)
    criterion = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.3, patience=10)

    best_rmse, best_state = float("inf"), None
    for epoch in range(args.epochs):
        model.train()
        sse, n = 0.0, 0
        for x, c, y in train_loader:
            x, c, y = x.to(device), c.to(device), y.to(device)
            optimizer.zero_grad()
            batch_sse = criterion(model(x, c), y)
            (batch_sse / y.size(0)).backward()
            optimizer.step()
            sse += batch_sse.item()
            n += y.size(0)
        pred, target = predict(model, val_loader, device)
        val_rmse = rmse_dollars(pred, target)
        scheduler.step(val_rmse)
        if val_rmse < best_rmse:
            best_rmse, best_state = val_rmse, copy.deepcopy(model.state_dict())
        if epoch % 20 == 0:
            lr = optimizer.param_groups[0]["lr"]
            print(f"epoch {epoch:3d}  train mse(log) {sse / n:.4f}  val RMSE ${val_rmse:,.0f}  lr {lr:.1e}")

    model.load_state_dict(best_state)
    pred, target = predict(model, test_loader, device)
    print(f"best val RMSE ${best_rmse:,.0f}; test RMSE ${rmse_dollars(pred, target):,.0f}")
    torch.save({"model": best_state, "mean": torch.from_numpy(stats[0]), "std": torch.from_numpy(stats[1])},
               "housing_mlp.pt")


if __name__ == "__main__":
    main()
