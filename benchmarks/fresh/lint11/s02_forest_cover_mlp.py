"""Forest cover type (UCI Covertype) with a residual MLP.

The CSV is the Kaggle/UCI export: 10 numeric columns, 4 one-hot wilderness areas, 40 one-hot
soil types and the target column Cover_Type (spruce/fir, lodgepole pine, ponderosa pine,
cottonwood/willow, aspen, Douglas-fir, krummholz).
"""
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {
    "csv": "data/covtype.csv",
    "out_dir": "runs/covtype_mlp",
    "num_classes": 7,
    "hidden": 512,
    "blocks": 3,
    "dropout": 0.15,
    "batch_size": 1024,
    "eval_batch_size": 4096,
    "epochs": 40,
    "lr": 2e-3,
    "val_fraction": 0.15,
    "seed": 17,
}

NUMERIC = [
    "Elevation", "Aspect", "Slope", "Horizontal_Distance_To_Hydrology",
    "Vertical_Distance_To_Hydrology", "Horizontal_Distance_To_Roadways", "Hillshade_9am",
    "Hillshade_Noon", "Hillshade_3pm", "Horizontal_Distance_To_Fire_Points",
]


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class ResidualBlock(nn.Module):
    def __init__(self, width, dropout):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(width, width, bias=False),
            nn.BatchNorm1d(width),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(width, width),
        )

    def forward(self, x):
        return torch.relu(x + self.net(x))


def build_model(n_features, cfg):
    return nn.Sequential(
        nn.Linear(n_features, cfg["hidden"]),
        nn.ReLU(),
        *[ResidualBlock(cfg["hidden"], cfg["dropout"]) for _ in range(cfg["blocks"])],
        nn.Linear(cfg["hidden"], cfg["num_classes"]),
    )


def load_tables(cfg):
    df = pd.read_csv(cfg["csv"])
    binary = [c for c in df.columns if c.startswith(("Wilderness_Area", "Soil_Type"))]
    rng = np.random.default_rng(cfg["seed"])
    order = rng.permutation(len(df))
    n_val = int(len(df) * cfg["val_fraction"])
    val_idx, train_idx = order[:n_val], order[n_val:]

    numeric = df[NUMERIC].to_numpy(dtype=np.float32)
    mean = numeric[train_idx].mean(axis=0)
    std = numeric[train_idx].std(axis=0) + 1e-6
    features = np.concatenate([(numeric - mean) / std, df[binary].to_numpy(dtype=np.float32)], axis=1)
    labels = df["Cover_Type"].to_numpy(dtype=np.int64)

    def subset(idx):
        return TensorDataset(torch.from_numpy(features[idx]), torch.from_numpy(labels[idx]))

    stats = {"mean": mean.tolist(), "std": std.tolist(), "binary_columns": binary}
    return subset(train_idx), subset(val_idx), stats


def evaluate(model, loader, criterion, device):
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            logits = model(xb)
            total_loss += criterion(logits, yb).item()
            correct += (logits.argmax(dim=1) == yb).sum().item()
            seen += yb.numel()
    return total_loss / len(loader), correct / seen


def main(cfg=CONFIG):
    seed_everything(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out_dir = Path(cfg["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)

    train_set, val_set, stats = load_tables(cfg)
    train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=cfg["eval_batch_size"])

    n_features = train_set.tensors[0].shape[1]
    model = build_model(n_features, cfg).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg["epochs"])

    best_acc = 0.0
    for epoch in range(cfg["epochs"]):
        model.train()
        running, n_seen = 0.0, 0
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.item() * yb.size(0)
            n_seen += yb.size(0)
        scheduler.step()

        val_loss, val_acc = evaluate(model, val_loader, criterion, device)
        print(f"epoch {epoch + 1:02d}  train {running / n_seen:.4f}  val {val_loss:.4f}  acc {val_acc:.4f}")
        if val_acc > best_acc:
            best_acc = val_acc
            torch.save(model.state_dict(), out_dir / "best.pt")

    (out_dir / "preprocessing.json").write_text(json.dumps(stats))
    print(f"best validation accuracy {best_acc:.4f}")


if __name__ == "__main__":
    main()
