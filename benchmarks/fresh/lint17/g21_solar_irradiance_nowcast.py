"""Nowcast global horizontal irradiance 15 minutes ahead from a pyranometer + sky-camera feature
stream. Each site's year-long record is read in consecutive windows with the recurrent state
carried across windows (truncated backpropagation through time). The job can be resumed.
"""
import argparse
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    data: str = "data/irradiance_sites.npz"
    ckpt: str = "runs/nowcast/last.pt"
    window: int = 96
    lead: int = 3
    hidden: int = 64
    epochs: int = 20
    lr: float = 1e-3
    clip: float = 0.5
    seed: int = 4


class Nowcaster(nn.Module):
    def __init__(self, n_features, hidden):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, h=None):
        out, h = self.gru(x, h)
        return self.head(out).squeeze(-1), h


def site_windows(features, target, window, lead):
    x, y = features[:-lead], target[lead:]
    for start in range(0, len(x) - window + 1, window):
        yield x[start:start + window], y[start:start + window]


def run_site(model, features, target, cfg, optimizer=None):
    h, total, count = None, 0.0, 0
    for x, y in site_windows(features, target, cfg.window, cfg.lead):
        pred, h = model(x.unsqueeze(0), h)
        h = h.detach()
        loss = F.mse_loss(pred, y.unsqueeze(0))
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            optimizer.step()
        total += loss.item()
        count += 1
    return total / max(count, 1)


def load_sites(path, device):
    d = np.load(path)
    names = sorted({k.split(":")[0] for k in d.files})
    feats = {n: torch.from_numpy(d[f"{n}:features"].astype(np.float32)) for n in names}
    ghi = {n: torch.from_numpy(d[f"{n}:ghi"].astype(np.float32)) for n in names}
    train_names, valid_names = names[:-1], names[-1:]
    stacked = torch.cat([feats[n] for n in train_names])
    mean, std = stacked.mean(0), stacked.std(0) + 1e-6
    scale = torch.cat([ghi[n] for n in train_names]).max()

    def prep(n):
        return ((feats[n] - mean) / std).to(device), (ghi[n] / scale).to(device)

    return [prep(n) for n in train_names], [prep(n) for n in valid_names], scale.item()


def main(argv=None):
    ap = argparse.ArgumentParser()
    for name, value in asdict(Config()).items():
        ap.add_argument(f"--{name}", type=type(value), default=value)
    cfg = Config(**vars(ap.parse_args(argv)))

    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train, valid, scale = load_sites(cfg.data, device)
    model = Nowcaster(train[0][0].shape[1], cfg.hidden).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    start_epoch = 0
    ckpt_path = Path(cfg.ckpt)
    if ckpt_path.exists():
        state = torch.load(ckpt_path, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start_epoch = state["epoch"] + 1
    ckpt_path.parent.mkdir(parents=True, exist_ok=True)

    for epoch in range(start_epoch, cfg.epochs):
        model.train()
        order = list(range(len(train)))
        random.shuffle(order)
        train_loss = sum(run_site(model, *train[i], cfg, optimizer) for i in order) / len(train)
        model.eval()
        with torch.no_grad():
            valid_rmse = (sum(run_site(model, *s, cfg) for s in valid) / len(valid)) ** 0.5 * scale
        scheduler.step()
        print(f"epoch {epoch}: train {train_loss:.5f} valid RMSE {valid_rmse:.1f} W/m2")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch}, ckpt_path)


if __name__ == "__main__":
    main()
