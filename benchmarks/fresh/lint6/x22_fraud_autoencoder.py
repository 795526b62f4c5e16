"""Unsupervised card-fraud screening: an autoencoder is trained on legitimate transactions only,
and the reconstruction error is used as an anomaly score. The alert threshold is set at the
99.5th percentile of the scores on held-out legitimate transactions."""

import json

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

FEATURES = [f"V{i}" for i in range(1, 29)] + ["log_amount", "hour_sin", "hour_cos"]


class TabularAE(nn.Module):
    def __init__(self, n_in, bottleneck=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 64), nn.ELU(), nn.Linear(64, 32), nn.ELU(),
                                     nn.Linear(32, bottleneck))
        self.decoder = nn.Sequential(nn.Linear(bottleneck, 32), nn.ELU(), nn.Linear(32, 64), nn.ELU(),
                                     nn.Linear(64, n_in))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def prepare(frame):
    frame = frame.copy()
    frame["log_amount"] = np.log1p(frame["Amount"])
    hours = (frame["Time"] // 3600) % 24
    frame["hour_sin"], frame["hour_cos"] = np.sin(2 * np.pi * hours / 24), np.cos(2 * np.pi * hours / 24)
    return frame


def scores(model, x, device, batch=8192):
    model.eval()
    out = []
    with torch.no_grad():
        for chunk in x.split(batch):
            chunk = chunk.to(device)
            out.append(((model(chunk) - chunk) ** 2).mean(dim=1).cpu())
    return torch.cat(out)


def main():
    frame = prepare(pd.read_csv("data/transactions.csv"))
    legit, fraud = frame[frame["Class"] == 0], frame[frame["Class"] == 1]
    legit = legit.sample(frac=1.0, random_state=42)
    n_val = len(legit) // 10
    train_legit, val_legit = legit.iloc[n_val:], legit.iloc[:n_val]

    mu = train_legit[FEATURES].mean()
    sigma = train_legit[FEATURES].std() + 1e-6
    as_tensor = lambda f: torch.tensor(((f[FEATURES] - mu) / sigma).to_numpy(np.float32))  # noqa: E731
    x_train, x_val, x_fraud = as_tensor(train_legit), as_tensor(val_legit), as_tensor(fraud)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TabularAE(len(FEATURES)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(x_train), batch_size=1024, shuffle=True)

    for epoch in range(30):
        model.train()
        epoch_loss = 0.0
        for (x,) in loader:
            x.to(device)
            recon = model(x)
            loss = nn.functional.mse_loss(recon, x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item() * x.size(0)
        print(f"epoch {epoch}: reconstruction MSE {epoch_loss / len(x_train):.5f}")

    val_scores = scores(model, x_val, device)
    threshold = torch.quantile(val_scores, 0.995).item()
    fraud_scores = scores(model, x_fraud, device)
    caught = (fraud_scores > threshold).float().mean().item()
    print(f"threshold {threshold:.4f}: flags {caught:.1%} of known fraud, 0.5% of legit by construction")

    torch.save(model.state_dict(), "fraud_ae.pt")
    with open("fraud_ae_meta.json", "w") as f:
        json.dump({"threshold": threshold, "mu": mu.tolist(), "sigma": sigma.tolist(), "features": FEATURES}, f)


if __name__ == "__main__":
    main()
