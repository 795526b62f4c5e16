"""Predict log sale prices of houses from the tabular listing data with a small MLP."""

import math

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "csv": "data/house_sales.csv",
    "numeric": ["sqft_living", "sqft_lot", "bedrooms", "bathrooms", "floors", "yr_built", "lat", "long"],
    "categorical": ["zipcode", "condition", "grade"],
    "hidden": 256,
    "dropout": 0.1,
    "lr": 1e-3,
    "weight_decay": 0.05,
    "epochs": 40,
    "batch_size": 128,
}


class Listings(Dataset):
    def __init__(self, frame, stats, cat_maps):
        num = frame[CONFIG["numeric"]].to_numpy(dtype=np.float32)
        self.x_num = torch.from_numpy((num - stats["mean"]) / stats["std"])
        self.x_cat = torch.stack(
            [torch.as_tensor(frame[c].map(cat_maps[c]).fillna(0).to_numpy(), dtype=torch.long)
             for c in CONFIG["categorical"]], dim=1)
        self.y = torch.as_tensor(np.log1p(frame["price"].to_numpy()), dtype=torch.float32)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x_num[i], self.x_cat[i], self.y[i]


class PriceMLP(nn.Module):
    def __init__(self, n_num, cat_sizes, hidden, dropout):
        super().__init__()
        self.embeds = nn.ModuleList(nn.Embedding(n + 1, min(16, (n + 1) // 2 + 1)) for n in cat_sizes)
        width = n_num + sum(e.embedding_dim for e in self.embeds)
        self.body = nn.Sequential(
            nn.Linear(width, hidden), nn.SiLU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden // 2), nn.SiLU(), nn.Dropout(dropout),
            nn.Linear(hidden // 2, 1),
        )

    def forward(self, x_num, x_cat):
        parts = [x_num] + [emb(x_cat[:, j]) for j, emb in enumerate(self.embeds)]
        return self.body(torch.cat(parts, dim=1))


def rmse_loss(pred, target):
    return torch.sqrt(torch.mean((pred - target) ** 2) + 1e-8)


def make_optimizer(model, cfg):
    return torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])


def main():
    df = pd.read_csv(CONFIG["csv"]).dropna(subset=["price"])
    df = df.sample(frac=1.0, random_state=0).reset_index(drop=True)
    n_val = len(df) // 5
    train_df, val_df = df.iloc[n_val:], df.iloc[:n_val]

    num = train_df[CONFIG["numeric"]].to_numpy(dtype=np.float32)
    stats = {"mean": num.mean(axis=0), "std": num.std(axis=0) + 1e-6}
    cat_maps = {c: {v: i + 1 for i, v in enumerate(sorted(train_df[c].unique()))} for c in CONFIG["categorical"]}

    train_dl = DataLoader(Listings(train_df, stats, cat_maps), batch_size=CONFIG["batch_size"], shuffle=True)
    val_dl = DataLoader(Listings(val_df, stats, cat_maps), batch_size=1024)

    model = PriceMLP(len(CONFIG["numeric"]), [len(cat_maps[c]) for c in CONFIG["categorical"]],
                     CONFIG["hidden"], CONFIG["dropout"])
    optimizer = make_optimizer(model, CONFIG)

    for epoch in range(CONFIG["epochs"]):
        model.train()
        for x_num, x_cat, y in train_dl:
            optimizer.zero_grad()
            loss = rmse_loss(model(x_num, x_cat), y)
            loss.backward()
            optimizer.step()

        model.eval()
        sq_err, count = 0.0, 0
        with torch.no_grad():
            for x_num, x_cat, y in val_dl:
                pred = model(x_num, x_cat).squeeze(-1)
                sq_err += ((pred - y) ** 2).sum().item()
                count += y.numel()
        print(f"epoch {epoch:02d}  val RMSE(log price) {math.sqrt(sq_err / count):.4f}")

    torch.save({"model": model.state_dict(), "stats": {k: v.tolist() for k, v in stats.items()},
                "cat_maps": {c: {str(k): i for k, i in m.items()} for c, m in cat_maps.items()}},
               "price_mlp.pt")


if __name__ == "__main__":
    main()
