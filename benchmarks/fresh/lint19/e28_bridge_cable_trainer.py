import argparse
import copy
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class TensionNet(nn.Module):
    def __init__(self, channels=3, width=48):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(channels, width, 15, stride=2, padding=7), nn.GELU(),
            nn.Conv1d(width, 2 * width, 9, stride=2, padding=4), nn.GELU(),
            nn.Conv1d(2 * width, 2 * width, 9, stride=2, padding=4), nn.GELU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(2 * width, 1),
        )

    def forward(self, accel):
        return self.net(accel).squeeze(1)


class Callback:
    def on_epoch_end(self, trainer, epoch, val_mae):
        pass


class KeepBest(Callback):
    def __init__(self):
        self.best, self.state = float("inf"), None

    def on_epoch_end(self, trainer, epoch, val_mae):
        if val_mae < self.best:
            self.best, self.state = val_mae, copy.deepcopy(trainer.model.state_dict())


class SaveLast(Callback):
    def __init__(self, path):
        self.path = Path(path)

    def on_epoch_end(self, trainer, epoch, val_mae):
        torch.save({"epoch": epoch, "model": trainer.model.state_dict(), "optimizer": trainer.opt.state_dict(),
                    "scheduler": trainer.sched.state_dict(), "val_mae": val_mae}, self.path)


class Trainer:
    def __init__(self, model, train_dl, epochs, lr, accumulate, clip, callbacks):
        self.model, self.train_dl, self.epochs = model, train_dl, epochs
        self.accumulate, self.clip, self.callbacks = accumulate, clip, callbacks
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        steps_per_epoch = len(train_dl) // accumulate
        self.sched = torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=epochs * steps_per_epoch)

    def fit(self, val_dl):
        for epoch in range(self.epochs):
            self.model.train()
            self.opt.zero_grad()
            for i, (accel, tension) in enumerate(self.train_dl):
                loss = F.mse_loss(self.model(accel), tension) / self.accumulate
                loss.backward()
                if (i + 1) % self.accumulate == 0:
                    nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                    self.opt.step()
                    self.sched.step()
                    self.opt.zero_grad()
            val_mae = self.validate(val_dl)
            print(f"epoch {epoch} val MAE {val_mae:.2f} kN lr {self.sched.get_last_lr()[0]:.2e}")
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, val_mae)

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        err = sum((self.model(a) - t).abs().sum().item() for a, t in loader)
        return err / len(loader.dataset)


def load(path):
    d = np.load(path)
    return TensorDataset(torch.from_numpy(d["accel"] / 9.81).float(), torch.from_numpy(d["tension_kn"]).float())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("data/cable_monitoring"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--accumulate", type=int, default=4)
    args = ap.parse_args()
    torch.manual_seed(28)
    train_dl = DataLoader(load(args.data / "train.npz"), batch_size=32, shuffle=True, drop_last=True)
    val_dl = DataLoader(load(args.data / "val.npz"), batch_size=256)
    keep = KeepBest()
    trainer = Trainer(TensionNet(), train_dl, args.epochs, 1e-3, args.accumulate, 1.0,
                      [keep, SaveLast(args.data / "last.pt")])
    trainer.fit(val_dl)
    trainer.model.load_state_dict(keep.state)
    torch.save(trainer.model.state_dict(), args.data / "tension_best.pt")


if __name__ == "__main__":
    main()
