import argparse
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class Config:
    data: str = "data/avalanche/observations.npz"
    out: str = "runs/avalanche"
    epochs: int = 60
    batch_size: int = 256
    lr: float = 1e-3
    hidden: int = 96
    resume: bool = False


class DangerNet(nn.Module):
    def __init__(self, n_features, hidden):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(n_features, hidden), nn.LayerNorm(hidden), nn.SiLU(), nn.Dropout(0.2),
            nn.Linear(hidden, hidden), nn.SiLU(),
        )
        self.logit = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.logit(self.body(x))

    @torch.no_grad()
    def predict_proba(self, x):
        return torch.sigmoid(self.forward(x)).squeeze(1)


def split_by_season(path):
    d = np.load(path)
    x = d["features"].astype(np.float32)
    y = d["avalanche"].astype(np.float32)
    train = d["season"] < 2022
    mu, sd = x[train].mean(0), x[train].std(0) + 1e-6
    x = (x - mu) / sd
    make = lambda m: TensorDataset(torch.from_numpy(x[m]), torch.from_numpy(y[m]))
    return make(train), make(~train), float((1 - y[train]).sum() / y[train].sum())


def main():
    parser = argparse.ArgumentParser()
    for f in fields(Config):
        kind = (lambda s: s.lower() == "true") if f.type is bool else f.type
        parser.add_argument(f"--{f.name}", type=kind, default=f.default)
    cfg = Config(**vars(parser.parse_args()))
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)

    train_ds, val_ds, neg_per_pos = split_by_season(cfg.data)
    train_dl = DataLoader(train_ds, batch_size=cfg.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=1024)
    model = DangerNet(train_ds.tensors[0].shape[1], cfg.hidden)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(neg_per_pos))
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    start = 0
    if cfg.resume and (out / "last.pt").exists():
        ckpt = torch.load(out / "last.pt", map_location="cpu", weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["epoch"] + 1

    for epoch in range(start, cfg.epochs):
        model.train()
        for x, y in train_dl:
            optimizer.zero_grad()
            loss = criterion(model(x), y.unsqueeze(1))
            loss.backward()
            optimizer.step()
        model.eval()
        hits, total = 0, 0
        for x, y in val_dl:
            hits += ((model.predict_proba(x) > 0.5).float() == y).sum().item()
            total += len(y)
        print(f"epoch {epoch} val accuracy {hits / total:.3f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "epoch": epoch, "config": asdict(cfg)}, out / "last.pt")


if __name__ == "__main__":
    main()
