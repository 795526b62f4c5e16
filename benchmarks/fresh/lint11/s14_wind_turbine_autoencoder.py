"""Condition monitoring of wind turbines from 10-minute SCADA records (normal-behaviour model).

A dense autoencoder learns the joint distribution of the SCADA channels during normal
operation; the alarm threshold is the 99.9th percentile of the reconstruction error on a
held-out month of normal data. Training can be interrupted and resumed.
"""
import argparse
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CHANNELS = ["wind_speed", "rotor_rpm", "gen_rpm", "power_kw", "pitch_deg", "nacelle_temp", "gearbox_oil_temp",
            "gearbox_bearing_temp", "gen_bearing_de_temp", "gen_bearing_nde_temp", "ambient_temp", "yaw_error"]


def dense(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, n_out, bias=False), nn.BatchNorm1d(n_out), nn.ReLU())


class SCADAAutoencoder(nn.Module):
    def __init__(self, n, code=4):
        super().__init__()
        self.encoder = nn.Sequential(dense(n, 64), dense(64, 32), nn.Linear(32, code))
        self.decoder = nn.Sequential(dense(code, 32), dense(32, 64), nn.Linear(64, n))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def reconstruction_error(model, loader, device):
    model.eval()
    errs = []
    with torch.no_grad():
        for (x,) in loader:
            x = x.to(device)
            errs.append(((model(x) - x) ** 2).mean(dim=1).cpu())
    return torch.cat(errs)


def checkpoint(path, **objects):
    state = {k: (v.state_dict() if hasattr(v, "state_dict") else v) for k, v in objects.items()}
    torch.save(state, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/turbine_07_scada.csv")
    ap.add_argument("--normal-until", default="2021-09-30")
    ap.add_argument("--calib-until", default="2021-10-31")
    ap.add_argument("--epochs", type=int, default=120)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--workdir", default="runs/wt07")
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    df = pd.read_csv(args.csv, parse_dates=["timestamp"]).dropna(subset=CHANNELS)
    df = df[df["status_code"] == 0]
    train_df = df[df["timestamp"] <= args.normal_until]
    calib_df = df[(df["timestamp"] > args.normal_until) & (df["timestamp"] <= args.calib_until)]
    mu = train_df[CHANNELS].to_numpy(np.float32).mean(axis=0)
    sigma = train_df[CHANNELS].to_numpy(np.float32).std(axis=0) + 1e-6

    def loader(frame, shuffle):
        x = torch.from_numpy(((frame[CHANNELS].to_numpy(np.float32) - mu) / sigma).astype(np.float32))
        return DataLoader(TensorDataset(x), batch_size=512, shuffle=shuffle, drop_last=shuffle)

    train_loader, calib_loader = loader(train_df, True), loader(calib_df, False)
    model = SCADAAutoencoder(len(CHANNELS)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-5)
    ckpt_path = os.path.join(args.workdir, "last.pt")

    start = 0
    if args.resume and os.path.exists(ckpt_path):
        state = torch.load(ckpt_path, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start = state["epoch"] + 1

    loss_fn = nn.MSELoss()
    for epoch in range(start, args.epochs):
        model.train()
        total, n = 0.0, 0
        for (x,) in train_loader:
            x = x.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), x)
            loss.backward()
            optimizer.step()
            total += loss.item() * x.size(0)
            n += x.size(0)
        scheduler.step()
        checkpoint(ckpt_path, model=model, optimizer=optimizer, scheduler=scheduler, epoch=epoch)
        if epoch % 10 == 0:
            print(f"epoch {epoch:3d}  mse {total / n:.5f}  lr {scheduler.get_last_lr()[0]:.1e}")

    calib_err = reconstruction_error(model, calib_loader, device)
    threshold = float(torch.quantile(calib_err, 0.999))
    checkpoint(os.path.join(args.workdir, "detector.pt"), model=model, threshold=threshold,
               mu=torch.from_numpy(mu), sigma=torch.from_numpy(sigma))
    print(f"threshold {threshold:.4f} from {len(calib_err)} calibration records")

    all_loader = loader(df, False)
    scores = reconstruction_error(model, all_loader, device).numpy()
    out = df[["timestamp"]].assign(score=scores, alarm=scores > threshold)
    out.to_csv(os.path.join(args.workdir, "scores.csv"), index=False)
    print(f"{int(out['alarm'].sum())} alarms over {len(out)} records")


if __name__ == "__main__":
    main()
