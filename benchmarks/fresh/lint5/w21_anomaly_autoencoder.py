"""Unsupervised anomaly detection on pump vibration windows with a 1-D convolutional autoencoder.

Trained on healthy windows only; a window is flagged when its reconstruction error exceeds the
99.5th percentile of the errors on held-out healthy windows.
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from pumps import load_windows


class ConvAE(nn.Module):
    def __init__(self, channels=3, width=32, code=16):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(channels, width, 7, stride=2, padding=3), nn.GELU(),
            nn.Conv1d(width, width * 2, 7, stride=2, padding=3), nn.GELU(),
            nn.Conv1d(width * 2, code, 7, stride=2, padding=3),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose1d(code, width * 2, 8, stride=2, padding=3), nn.GELU(),
            nn.ConvTranspose1d(width * 2, width, 8, stride=2, padding=3), nn.GELU(),
            nn.ConvTranspose1d(width, channels, 8, stride=2, padding=3),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


@torch.no_grad()
def window_errors(model, windows, device, batch_size=1024):
    model.eval()
    errs = []
    for (x,) in DataLoader(TensorDataset(windows), batch_size=batch_size):
        x = x.to(device)
        errs.append(F.mse_loss(model(x), x, reduction="none").mean(dim=(1, 2)).float().cpu())
    return torch.cat(errs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/pump_vibration.npz")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--amp", action="store_true")
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = args.amp and device.type == "cuda"

    healthy, suspect, suspect_labels = load_windows(args.data, length=1024)
    healthy = torch.from_numpy(healthy).float()
    mean, std = healthy.mean(dim=(0, 2), keepdim=True), healthy.std(dim=(0, 2), keepdim=True)
    healthy = (healthy - mean) / std
    suspect = (torch.from_numpy(suspect).float() - mean) / std
    perm = torch.randperm(len(healthy))
    fit_set, calib_set = healthy[perm[: int(0.85 * len(perm))]], healthy[perm[int(0.85 * len(perm)) :]]

    model = ConvAE().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    loader = DataLoader(TensorDataset(fit_set), batch_size=256, shuffle=True, drop_last=True)

    for epoch in range(args.epochs):
        model.train()
        seen, total = 0, 0.0
        for (x,) in loader:
            x = x.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
                loss = F.mse_loss(model(x), x)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            total += loss.item() * x.size(0)
            seen += x.size(0)
        sched.step()
        if epoch % 10 == 0:
            print(f"epoch {epoch:3d}  recon MSE {total / seen:.5f}")

    threshold = torch.quantile(window_errors(model, calib_set, device), 0.995).item()
    flagged = (window_errors(model, suspect, device) > threshold).numpy()
    recall = flagged[suspect_labels == 1].mean()
    false_alarm = flagged[suspect_labels == 0].mean()
    print(f"threshold {threshold:.4f}: recall on faults {recall:.3f}, false alarms {false_alarm:.3f}")
    torch.save({"model": model.state_dict(), "mean": mean, "std": std, "threshold": threshold}, "pump_ae.pt")
    np.save("pump_flags.npy", flagged)


if __name__ == "__main__":
    main()
