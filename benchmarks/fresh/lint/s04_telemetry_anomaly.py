"""Two-stage anomaly detector for machine telemetry: an autoencoder, then a classifier on its codes."""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

FEATURES = ["vibration", "temperature", "pressure", "rpm", "current", "voltage", "humidity", "torque"]


class AutoEncoder(nn.Module):
    def __init__(self, n_in=len(FEATURES), code=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, code))
        self.decoder = nn.Sequential(nn.Linear(code, 32), nn.ReLU(), nn.Linear(32, n_in))

    def forward(self, x):
        return self.decoder(self.encoder(x))


class AnomalyClassifier(nn.Module):
    def __init__(self, ae, code=4):
        super().__init__()
        self.encoder = ae.encoder
        self.head = nn.Sequential(nn.Linear(code, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.head(self.encoder(x)).squeeze(-1)


def load(path):
    df = pd.read_parquet(path).sort_values(["machine_id", "timestamp"])
    x = df[FEATURES].to_numpy(np.float32)
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    return torch.from_numpy(x), torch.from_numpy(df["is_anomaly"].to_numpy(np.float32))


def main():
    x, y = load("telemetry.parquet")
    normal = x[y == 0]

    # stage 1: reconstruct normal behaviour
    ae = AutoEncoder()
    opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    ae_loader = DataLoader(TensorDataset(normal), batch_size=256, shuffle=True)
    for epoch in range(20):
        for (xb,) in ae_loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(ae(xb), xb)
            loss.backward()
            opt.step()
        print(f"[ae] epoch {epoch} recon {loss.item():.4f}")

    # stage 2: keep the encoder fixed and fit a small head on the labelled data
    clf = AnomalyClassifier(ae)
    clf.encoder.eval()
    opt = torch.optim.Adam(clf.parameters(), lr=1e-3)
    pos_weight = (y == 0).sum() / (y == 1).sum()
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    clf_loader = DataLoader(TensorDataset(x, y), batch_size=256)
    for epoch in range(10):
        for xb, yb in clf_loader:
            opt.zero_grad()
            loss = criterion(clf(xb), yb)
            loss.backward()
            opt.step()
        print(f"[clf] epoch {epoch} bce {loss.item():.4f}")

    torch.save({"ae": ae.state_dict(), "clf": clf.state_dict()}, "anomaly_model.pt")


if __name__ == "__main__":
    main()
