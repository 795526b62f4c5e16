"""Formation energy per atom of inorganic crystals from composition descriptors.

features.npz: X (N, 145) Magpie-style composition statistics, y (N,) formation energy in
eV/atom, and the Materials Project ids, already split into train/val/test by the
structure-prototype-aware splitter.
"""
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CFG = {
    "features": "data/mp_formation_features.npz",
    "out": "runs/formation_mlp",
    "widths": [512, 512, 256, 128],
    "dropout": 0.05,
    "batch_size": 512,
    "epochs": 300,
    "optimizer": {"lr": 0.01, "momentum": 0.9, "nesterov": True},
    "loss_reduction": "sum",
    "milestones": [150, 225],
    "seed": 42,
}


def mlp(n_in, widths, dropout):
    layers, prev = [], n_in
    for w in widths:
        layers += [nn.Linear(prev, w), nn.SiLU(), nn.Dropout(dropout)]
        prev = w
    layers.append(nn.Linear(prev, 1))
    return nn.Sequential(*layers)


def split_tensors(npz, name, mean=None, std=None):
    x = npz[f"X_{name}"].astype(np.float32)
    y = npz[f"y_{name}"].astype(np.float32)
    if mean is None:
        mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
    x = (x - mean) / std
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(y).unsqueeze(1)), mean, std


def mae(model, loader, device):
    model.eval()
    err, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            err += (model(x.to(device)) - y.to(device)).abs().sum().item()
            n += y.size(0)
    return err / n


def main(cfg=CFG):
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    npz = np.load(cfg["features"])
    train_set, mean, std = split_tensors(npz, "train")
    val_set, _, _ = split_tensors(npz, "val", mean, std)
    test_set, _, _ = split_tensors(npz, "test", mean, std)

    train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=2048)
    test_loader = DataLoader(test_set, batch_size=2048)

    model = mlp(train_set.tensors[0].shape[1], cfg["widths"], cfg["dropout"]).to(device)
    criterion = nn.MSELoss(reduction=cfg["loss_reduction"])
    optimizer = torch.optim.SGD(model.parameters(), **cfg["optimizer"])
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=cfg["milestones"], gamma=0.1)

    best_val, best_state, history = float("inf"), None, []
    t0 = time.time()
    for epoch in range(cfg["epochs"]):
        model.train()
        sq, n = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            sq += loss.item() if cfg["loss_reduction"] == "sum" else loss.item() * y.size(0)
            n += y.size(0)
        scheduler.step()

        val_mae = mae(model, val_loader, device)
        history.append({"epoch": epoch, "train_mse": sq / n, "val_mae": val_mae})
        if val_mae < best_val:
            best_val = val_mae
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if epoch % 10 == 0:
            print(f"[{time.time() - t0:6.0f}s] epoch {epoch:3d} train mse {sq / n:.4f} val mae {val_mae:.4f} eV/atom")

    model.load_state_dict(best_state)
    test_mae = mae(model, test_loader, device)
    print(f"best val MAE {best_val:.4f}  test MAE {test_mae:.4f} eV/atom")

    os.makedirs(cfg["out"], exist_ok=True)
    torch.save({"model": model.state_dict(), "mean": torch.from_numpy(mean), "std": torch.from_numpy(std)},
               os.path.join(cfg["out"], "best.pt"))
    with open(os.path.join(cfg["out"], "history.json"), "w") as f:
        json.dump(history, f)


if __name__ == "__main__":
    main()
