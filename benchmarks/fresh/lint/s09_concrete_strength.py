"""Predict concrete compressive strength (UCI) with an MLP; early stopping on validation RMSE."""
import copy

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def make_loaders(csv_path, batch_size=32, seed=0):
    df = pd.read_csv(csv_path)
    y = df.pop("strength").to_numpy(np.float32)
    x = df.to_numpy(np.float32)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(x))
    cut = int(0.8 * len(x))
    tr, va = idx[:cut], idx[cut:]
    mu, sd = x[tr].mean(0), x[tr].std(0)
    x = (x - mu) / sd
    to_t = lambda a: torch.from_numpy(np.ascontiguousarray(a))
    train = TensorDataset(to_t(x[tr]), to_t(y[tr]).unsqueeze(1))
    val = TensorDataset(to_t(x[va]), to_t(y[va]).unsqueeze(1))
    return DataLoader(train, batch_size, shuffle=True, drop_last=True), DataLoader(val, 256)


def build_model(n_in):
    return nn.Sequential(
        nn.Linear(n_in, 64), nn.BatchNorm1d(64), nn.ReLU(),
        nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(),
        nn.Linear(64, 1),
    )


def fit(model, train_dl, val_dl, epochs=300, patience=25):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=8)
    loss_fn = nn.MSELoss()
    best_rmse, best_state, waited = float("inf"), None, 0
    for epoch in range(epochs):
        model.train()
        running, seen = 0.0, 0
        for xb, yb in train_dl:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            running += loss.item() * xb.size(0)
            seen += xb.size(0)
        model.eval()
        with torch.no_grad():
            sq = sum(((model(xb) - yb) ** 2).sum().item() for xb, yb in val_dl)
        val_rmse = (sq / len(val_dl.dataset)) ** 0.5
        plateau.step(val_rmse)
        if val_rmse < best_rmse:
            best_rmse, best_state, waited = val_rmse, copy.deepcopy(model.state_dict()), 0
        else:
            waited += 1
            if waited > patience:
                break
        if epoch % 25 == 0:
            print(f"epoch {epoch}: train mse {running / seen:.2f} val rmse {val_rmse:.2f}")
    model.load_state_dict(best_state)
    return best_rmse


if __name__ == "__main__":
    train_dl, val_dl = make_loaders("concrete.csv")
    model = build_model(train_dl.dataset.tensors[0].shape[1])
    print("best val RMSE:", round(fit(model, train_dl, val_dl), 3))
    torch.save(model.state_dict(), "concrete_mlp.pt")
