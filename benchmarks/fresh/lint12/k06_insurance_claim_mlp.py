"""Claim / no-claim model for the Porto Seguro safe-driver table (normalised Gini as metric).

Categorical columns (suffix _cat) go through embeddings; the rest are standardised with the
training split's statistics. The trunk is a stack of gated residual blocks.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {
    "csv": "data/porto_seguro/train.csv",
    "hidden": 256,
    "blocks": 3,
    "emb_dim": 4,
    "gate_bias": -3.0,
    "dropout": 0.15,
    "batch_size": 2048,
    "epochs": 20,
    "lr": 2e-3,
    "seed": 42,
}


class GatedResidual(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.fc2(self.drop(F.relu(self.fc1(x))))
        return x + torch.sigmoid(self.gate(x)) * h


class ClaimNet(nn.Module):
    def __init__(self, n_num, cardinalities, cfg):
        super().__init__()
        self.embeds = nn.ModuleList(nn.Embedding(c + 1, cfg["emb_dim"]) for c in cardinalities)
        in_dim = n_num + cfg["emb_dim"] * len(cardinalities)
        self.input_norm = nn.BatchNorm1d(in_dim)
        self.stem = nn.Linear(in_dim, cfg["hidden"])
        self.blocks = nn.Sequential(*[GatedResidual(cfg["hidden"], cfg["dropout"]) for _ in range(cfg["blocks"])])
        self.out = nn.Linear(cfg["hidden"], 1)

    def forward(self, x_num, x_cat):
        emb = [e(x_cat[:, i]) for i, e in enumerate(self.embeds)]
        h = self.input_norm(torch.cat([x_num, *emb], dim=1))
        h = self.blocks(F.relu(self.stem(h)))
        return self.out(h).squeeze(1)


def init_gates(module, bias=CONFIG["gate_bias"]):
    if isinstance(module, nn.Linear):
        nn.init.constant_(module.bias, bias)


def prepare(cfg):
    df = pd.read_csv(cfg["csv"]).replace(-1, np.nan)
    cat_cols = [c for c in df.columns if c.endswith("_cat")]
    num_cols = [c for c in df.columns if c not in cat_cols + ["id", "target"]]
    for c in cat_cols:
        df[c] = df[c].fillna(-1).astype(int) + 1
    df[num_cols] = df[num_cols].fillna(df[num_cols].median())
    train, valid = train_test_split(df, test_size=0.2, stratify=df["target"], random_state=cfg["seed"])
    scaler = StandardScaler().fit(train[num_cols])

    def tensors(part):
        x_num = torch.tensor(scaler.transform(part[num_cols]), dtype=torch.float32)
        x_cat = torch.tensor(part[cat_cols].to_numpy(), dtype=torch.long)
        y = torch.tensor(part["target"].to_numpy(), dtype=torch.float32)
        return TensorDataset(x_num, x_cat, y)

    cards = [int(df[c].max()) for c in cat_cols]
    return tensors(train), tensors(valid), len(num_cols), cards


def gini(y, p):
    return 2.0 * roc_auc_score(y, p) - 1.0


def main(cfg=CONFIG):
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds, valid_ds, n_num, cards = prepare(cfg)
    train_dl = DataLoader(train_ds, batch_size=cfg["batch_size"], shuffle=True)
    valid_dl = DataLoader(valid_ds, batch_size=8192)

    model = ClaimNet(n_num, cards, cfg)
    model.apply(init_gates)
    model.to(device)
    pos_rate = train_ds.tensors[2].mean().item()
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor((1 - pos_rate) / pos_rate, device=device))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)

    for epoch in range(cfg["epochs"]):
        model.train()
        total, n = 0.0, 0
        for x_num, x_cat, y in train_dl:
            x_num, x_cat, y = x_num.to(device), x_cat.to(device), y.to(device)
            loss = criterion(model(x_num, x_cat), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            n += len(y)
        scheduler.step()

        model.eval()
        scores = []
        with torch.no_grad():
            for x_num, x_cat, _ in valid_dl:
                scores.append(torch.sigmoid(model(x_num.to(device), x_cat.to(device))).cpu())
        g = gini(valid_ds.tensors[2].numpy(), torch.cat(scores).numpy())
        print(f"epoch {epoch:2d} train loss {total / n:.4f} valid gini {g:.4f}")


if __name__ == "__main__":
    main()
