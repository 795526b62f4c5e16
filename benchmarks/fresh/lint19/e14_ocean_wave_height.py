import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

DEFAULTS = {"epochs": 40, "batch_size": 128, "lr": 3e-3, "lr_decay_per_epoch": 0.92, "hidden": 96}


class Callback:
    def on_batch_end(self, trainer, loss):
        pass

    def on_epoch_end(self, trainer, epoch, metrics):
        pass


class LRSchedule(Callback):
    def __init__(self, scheduler):
        self.scheduler = scheduler

    def on_batch_end(self, trainer, loss):
        self.scheduler.step()


class Progress(Callback):
    def on_epoch_end(self, trainer, epoch, metrics):
        lr = trainer.optimizer.param_groups[0]["lr"]
        print(f"epoch {epoch:02d} lr {lr:.2e} " + " ".join(f"{k} {v:.3f}" for k, v in metrics.items()))


class SpectrumToHs(nn.Module):
    def __init__(self, n_freq, n_dir, hidden):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(n_dir, hidden, 5, padding=2), nn.ReLU(),
                                  nn.Conv1d(hidden, hidden, 5, padding=2), nn.ReLU())
        self.out = nn.Linear(hidden * n_freq, 1)

    def forward(self, spectrum):
        return self.out(self.conv(spectrum).flatten(1)).squeeze(1)


class Trainer:
    def __init__(self, model, optimizer, callbacks):
        self.model, self.optimizer, self.callbacks = model, optimizer, callbacks

    def fit(self, train_dl, val_dl, epochs):
        for epoch in range(epochs):
            self.model.train()
            for spec, hs in train_dl:
                loss = F.mse_loss(self.model(spec), hs)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                for cb in self.callbacks:
                    cb.on_batch_end(self, loss.item())
            metrics = {"val_rmse_m": self.rmse(val_dl)}
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, metrics)

    @torch.no_grad()
    def rmse(self, loader):
        self.model.eval()
        se = n = 0.0
        for spec, hs in loader:
            se += ((self.model(spec) - hs) ** 2).sum().item()
            n += hs.numel()
        return (se / n) ** 0.5


def load(path):
    d = np.load(path)
    spec = np.log1p(d["spectra"].astype(np.float32))
    return TensorDataset(torch.from_numpy(spec), torch.from_numpy(d["hs"].astype(np.float32)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=None)
    ap.add_argument("--train", default="data/buoys/train.npz")
    ap.add_argument("--val", default="data/buoys/val.npz")
    args = ap.parse_args()
    cfg = dict(DEFAULTS, **(json.loads(Path(args.config).read_text()) if args.config else {}))

    torch.manual_seed(0)
    train_ds, val_ds = load(args.train), load(args.val)
    n_dir, n_freq = train_ds.tensors[0].shape[1:]
    model = SpectrumToHs(n_freq, n_dir, cfg["hidden"])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=cfg["lr_decay_per_epoch"])
    trainer = Trainer(model, optimizer, [LRSchedule(scheduler), Progress()])
    trainer.fit(DataLoader(train_ds, batch_size=cfg["batch_size"], shuffle=True),
                DataLoader(val_ds, batch_size=1024), cfg["epochs"])
    torch.save(model.state_dict(), "hs_from_spectrum.pt")


if __name__ == "__main__":
    main()
