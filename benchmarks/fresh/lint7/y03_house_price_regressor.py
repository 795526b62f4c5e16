"""House price regression (log price) with an MLP on tabular features.

Preprocessing is fit on the training fold only; the model predicts log1p(price).
"""
import argparse
import copy

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from torch.utils.data import DataLoader, TensorDataset

NUMERIC = ["sqft_living", "sqft_lot", "bedrooms", "bathrooms", "floors", "yr_built", "lat", "long"]
CATEGORICAL = ["zipcode", "condition", "view"]


class PriceMLP(nn.Module):
    def __init__(self, n_in, hidden=(256, 128, 64), p_drop=0.1):
        super().__init__()
        layers, width = [], n_in
        for h in hidden:
            layers += [nn.Linear(width, h, bias=False), nn.BatchNorm1d(h), nn.SiLU(), nn.Dropout(p_drop)]
            width = h
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def decay_groups(model, weight_decay):
    decay, no_decay = [], []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if isinstance(module, nn.Linear) and name == "weight":
                decay.append(p)
            else:
                no_decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def to_tensors(features, target):
    x = torch.as_tensor(np.asarray(features, dtype=np.float32))
    y = torch.as_tensor(np.log1p(target.to_numpy(dtype=np.float32)))
    return TensorDataset(x, y)


@torch.no_grad()
def rmse(model, loader, device):
    model.eval()
    sq_err, n = 0.0, 0
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        sq_err += ((model(xb) - yb) ** 2).sum().item()
        n += yb.numel()
    return (sq_err / n) ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/kc_house_data.csv")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--max-lr", type=float, default=3e-3)
    ap.add_argument("--weight-decay", type=float, default=1e-2)
    args = ap.parse_args()

    torch.manual_seed(7)
    df = pd.read_csv(args.csv)
    train_df, val_df = train_test_split(df, test_size=0.15, random_state=7)

    pre = ColumnTransformer([
        ("num", StandardScaler(), NUMERIC),
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), CATEGORICAL),
    ])
    x_train = pre.fit_transform(train_df)
    x_val = pre.transform(val_df)
    train_ds = to_tensors(x_train, train_df["price"])
    val_ds = to_tensors(x_val, val_df["price"])

    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=1024)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = PriceMLP(x_train.shape[1]).to(device)
    optimizer = torch.optim.AdamW(decay_groups(model, args.weight_decay), lr=args.max_lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.max_lr, total_steps=args.epochs * len(train_dl), pct_start=0.2)
    loss_fn = nn.SmoothL1Loss(beta=0.1)

    best_rmse, best_state = float("inf"), None
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_dl:
            xb, yb = xb.to(device), yb.to(device)
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
        val_rmse = rmse(model, val_dl, device)
        if val_rmse < best_rmse:
            best_rmse, best_state = val_rmse, copy.deepcopy(model.state_dict())
        print(f"epoch {epoch:3d}  lr {scheduler.get_last_lr()[0]:.2e}  val rmse(log) {val_rmse:.4f}")

    model.load_state_dict(best_state)
    torch.save(model.state_dict(), "house_price_mlp.pt")
    print(f"best val rmse(log) {best_rmse:.4f}")


if __name__ == "__main__":
    main()
