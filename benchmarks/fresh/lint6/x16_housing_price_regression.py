"""Predict log sale price of residential properties from tabular features: numeric columns
are standardised, categorical columns go through learned embeddings."""

import copy

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NUMERIC = ["living_area", "lot_area", "bedrooms", "bathrooms", "year_built", "garage_cars", "overall_quality"]
CATEGORICAL = ["neighborhood", "building_type", "heating", "zoning"]


class PriceNet(nn.Module):
    def __init__(self, cardinalities, n_numeric, emb_dim=8, hidden=256):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(card, emb_dim) for card in cardinalities)
        self.mlp = nn.Sequential(
            nn.Linear(n_numeric + emb_dim * len(cardinalities), hidden), nn.SiLU(), nn.Dropout(0.1),
            nn.Linear(hidden, hidden // 2), nn.SiLU(), nn.Linear(hidden // 2, 1))

    def forward(self, numeric, categorical):
        embedded = [emb(categorical[:, i]) for i, emb in enumerate(self.embeddings)]
        return self.mlp(torch.cat([numeric, *embedded], dim=1))


def encode(train, valid):
    codes = {c: {v: i for i, v in enumerate(sorted(train[c].astype(str).unique()), start=1)} for c in CATEGORICAL}
    mean, std = train[NUMERIC].mean(), train[NUMERIC].std() + 1e-6

    def tensors(frame):
        num = torch.tensor(((frame[NUMERIC] - mean) / std).fillna(0.0).to_numpy(np.float32))
        cat = torch.tensor(np.stack([frame[c].astype(str).map(codes[c]).fillna(0).to_numpy(np.int64)
                                     for c in CATEGORICAL], axis=1))
        target = torch.tensor(np.log1p(frame["sale_price"].to_numpy(np.float32))).view(-1, 1)
        return TensorDataset(num, cat, target)

    return tensors(train), tensors(valid), [len(codes[c]) + 1 for c in CATEGORICAL]


def main():
    frame = pd.read_csv("data/house_sales.csv")
    shuffled = frame.sample(frac=1.0, random_state=0)
    cut = int(0.8 * len(shuffled))
    train_ds, valid_ds, cards = encode(shuffled.iloc[:cut], shuffled.iloc[cut:])

    train_dl = DataLoader(train_ds, batch_size=128, shuffle=True)
    valid_dl = DataLoader(valid_ds, batch_size=1024)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = PriceNet(cards, len(NUMERIC)).to(device)
    matrices = [p for p in model.parameters() if p.ndim == 2]
    vectors = [p for p in model.parameters() if p.ndim != 2]
    optimizer = torch.optim.AdamW([{"params": matrices, "weight_decay": 1e-2},
                                   {"params": vectors, "weight_decay": 0.0}], lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.3)
    loss_fn = nn.MSELoss()

    best_rmse, best_state = float("inf"), None
    for epoch in range(100):
        model.train()
        for num, cat, target in train_dl:
            num, cat, target = num.to(device), cat.to(device), target.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(num, cat), target)
            loss.backward()
            optimizer.step()
        scheduler.step()

        model.eval()
        sq_err, count = 0.0, 0
        with torch.no_grad():
            for num, cat, target in valid_dl:
                pred = model(num.to(device), cat.to(device))
                sq_err += ((pred - target.to(device)) ** 2).sum().item()
                count += target.size(0)
        rmse = (sq_err / count) ** 0.5
        if rmse < best_rmse:
            best_rmse, best_state = rmse, copy.deepcopy(model.state_dict())
        if epoch % 10 == 0:
            print(f"epoch {epoch}: valid RMSE (log price) {rmse:.4f}")

    model.load_state_dict(best_state)
    torch.save(model.state_dict(), "price_net.pt")
    print(f"best valid RMSE {best_rmse:.4f}")


if __name__ == "__main__":
    main()
