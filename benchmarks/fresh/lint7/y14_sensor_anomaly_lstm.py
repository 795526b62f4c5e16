"""LSTM autoencoder for anomaly detection on pump sensor data (52 channels, 1-minute rows).

Trained on the first 60% of the NORMAL periods; the threshold is the 99.5th percentile of
the reconstruction error on a later validation stretch. Validates every `val_every` steps.
"""
import argparse

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, Dataset


class Windows(Dataset):
    def __init__(self, array, length=60, stride=10):
        self.data = torch.from_numpy(array.astype(np.float32))
        self.starts = list(range(0, len(array) - length + 1, stride))
        self.length = length

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        return self.data[s : s + self.length]


class LSTMAutoencoder(nn.Module):
    def __init__(self, n_channels, hidden=64, latent=16):
        super().__init__()
        self.encoder = nn.LSTM(n_channels, hidden, batch_first=True)
        self.to_latent = nn.Linear(hidden, latent)
        self.from_latent = nn.Linear(latent, hidden)
        self.decoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_channels)

    def forward(self, x):
        _, (h, _) = self.encoder(x)
        z = self.to_latent(h[-1])
        seed = self.from_latent(z).unsqueeze(1).expand(-1, x.size(1), -1)
        y, _ = self.decoder(seed)
        return self.out(y)


def window_errors(model, loader, device):
    errs = []
    with torch.no_grad():
        for x in loader:
            x = x.to(device)
            errs.append(((model(x) - x) ** 2).mean(dim=(1, 2)).cpu())
    return torch.cat(errs)


def validate(model, loader, device):
    was_training = model.training
    model.eval()
    errs = window_errors(model, loader, device)
    model.train(was_training)
    return errs.mean().item(), errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/pump_sensor.csv")
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--val-every", type=int, default=500)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    df = pd.read_csv(args.csv, parse_dates=["timestamp"]).sort_values("timestamp")
    sensors = [c for c in df.columns if c.startswith("sensor_")]
    df[sensors] = df[sensors].interpolate(limit_direction="both")
    normal = df[df["machine_status"] == "NORMAL"]
    n_train = int(len(normal) * 0.6)
    n_val = int(len(normal) * 0.2)
    scaler = StandardScaler().fit(normal[sensors].iloc[:n_train])
    train_arr = scaler.transform(normal[sensors].iloc[:n_train])
    val_arr = scaler.transform(normal[sensors].iloc[n_train : n_train + n_val])

    train_dl = DataLoader(Windows(train_arr), batch_size=128, shuffle=True, drop_last=True)
    val_dl = DataLoader(Windows(val_arr, stride=60), batch_size=256)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = LSTMAutoencoder(len(sensors)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-6)
    criterion = nn.MSELoss()

    step, best_val, best_state = 0, float("inf"), None
    running, seen = 0.0, 0
    model.train()
    while step < args.steps:
        for x in train_dl:
            x = x.to(device)
            loss = criterion(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            running += loss.item() * x.size(0)
            seen += x.size(0)
            step += 1
            if step % args.val_every == 0:
                val_loss, _ = validate(model, val_dl, device)
                print(f"step {step:6d} train {running / seen:.4f} val {val_loss:.4f}")
                running, seen = 0.0, 0
                if val_loss < best_val:
                    best_val = val_loss
                    best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            if step >= args.steps:
                break

    model.load_state_dict(best_state)
    _, errs = validate(model, val_dl, device)
    threshold = float(np.percentile(errs.numpy(), 99.5))
    torch.save({"model": model.state_dict(), "threshold": threshold,
                "mean": scaler.mean_.tolist(), "scale": scaler.scale_.tolist()}, "pump_lstm_ae.pt")
    print(f"best val {best_val:.4f}; anomaly threshold {threshold:.4f}")


if __name__ == "__main__":
    main()
