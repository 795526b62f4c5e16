import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def scada_features(table):
    speed, direction, temp, pitch = table[:, 0], table[:, 1], table[:, 2], table[:, 3]
    rad = np.deg2rad(direction)
    return np.stack([speed, speed ** 3 / 1000.0, np.sin(rad), np.cos(rad), temp, pitch], axis=1)


class Callback:
    def on_epoch_end(self, trainer, logs):
        pass

    def on_fit_end(self, trainer):
        pass


class BestWeights(Callback):
    def __init__(self):
        self.best = math.inf
        self.state = None

    def on_epoch_end(self, trainer, logs):
        if logs["val_loss"] < self.best:
            self.best = logs["val_loss"]
            self.state = trainer.model.state_dict()

    def on_fit_end(self, trainer):
        if self.state is not None:
            trainer.model.load_state_dict(self.state)


class History(Callback):
    def __init__(self):
        self.rows = []

    def on_epoch_end(self, trainer, logs):
        self.rows.append(dict(logs))
        print(" ".join(f"{k}={v:.4f}" for k, v in logs.items()))


class Trainer:
    def __init__(self, model, optimizer, device, max_grad_norm=1.0, callbacks=()):
        self.model, self.optimizer, self.device = model, optimizer, device
        self.max_grad_norm = max_grad_norm
        self.callbacks = list(callbacks)

    def _step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        return loss.item(), grad_norm.item()

    def _evaluate(self, loader):
        self.model.eval()
        total, n = 0.0, 0
        with torch.no_grad():
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                total += F.mse_loss(self.model(x), y, reduction="sum").item()
                n += len(y)
        return total / n

    def fit(self, train_loader, val_loader, epochs):
        for epoch in range(epochs):
            self.model.train()
            losses, norms = [], []
            for x, y in train_loader:
                loss, norm = self._step(x.to(self.device), y.to(self.device))
                losses.append(loss)
                norms.append(norm)
            logs = {"epoch": epoch, "loss": float(np.mean(losses)), "grad_norm": float(np.max(norms)), "val_loss": self._evaluate(val_loader)}
            for cb in self.callbacks:
                cb.on_epoch_end(self, logs)
        for cb in self.callbacks:
            cb.on_fit_end(self)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scada", default="turbine_scada.npy")
    parser.add_argument("--epochs", type=int, default=50)
    args = parser.parse_args()
    table = np.load(args.scada).astype(np.float32)
    x = torch.from_numpy(scada_features(table[:, :4])).float()
    x = (x - x.mean(0)) / x.std(0)
    y = torch.from_numpy(table[:, 4:5] / table[:, 4].max())
    n_train = int(0.8 * len(x))
    train_loader = DataLoader(TensorDataset(x[:n_train], y[:n_train]), batch_size=128, shuffle=True, drop_last=True)
    val_loader = DataLoader(TensorDataset(x[n_train:], y[n_train:]), batch_size=1024)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(6, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    Trainer(model, optimizer, device, max_grad_norm=0.5, callbacks=[BestWeights(), History()]).fit(train_loader, val_loader, args.epochs)
    torch.save(model.state_dict(), "power_curve.pt")


if __name__ == "__main__":
    main()
