"""One-hour-ahead traffic speed forecasts for the 207 loop detectors of METR-LA.

speeds.npy holds a (T, 207) array of 5-minute mean speeds (mph, 0 = missing). Twelve past steps
predict the next twelve; every sensor is a sample, with a learned sensor embedding.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

OPTS = {"file": "data/metr_la/speeds.npy", "steps_in": 12, "steps_out": 12, "hidden": 128, "emb": 16,
        "dropout": 0.3, "epochs": 50, "batch": 1024, "lr": 2e-3, "patience": 8, "seed": 4}


class SensorWindows(Dataset):
    def __init__(self, speeds, start, stop, steps_in, steps_out, mean, std):
        self.x = torch.from_numpy(((speeds - mean) / std).astype(np.float32))
        self.raw = torch.from_numpy(speeds.astype(np.float32))
        self.t0 = list(range(start, stop - steps_in - steps_out + 1))
        self.n_sensors, self.steps_in, self.steps_out = speeds.shape[1], steps_in, steps_out

    def __len__(self):
        return len(self.t0) * self.n_sensors

    def __getitem__(self, i):
        t, s = self.t0[i // self.n_sensors], i % self.n_sensors
        past = self.x[t: t + self.steps_in, s]
        tod = (t + self.steps_in) % 288 / 288.0
        future = self.raw[t + self.steps_in: t + self.steps_in + self.steps_out, s]
        return past, torch.tensor([math.sin(2 * math.pi * tod), math.cos(2 * math.pi * tod)]), s, future


class SpeedGRU(nn.Module):
    def __init__(self, n_sensors, o):
        super().__init__()
        self.sensor = nn.Embedding(n_sensors, o["emb"])
        self.gru = nn.GRU(1 + 2 + o["emb"], o["hidden"], num_layers=2, batch_first=True, dropout=o["dropout"])
        self.drop = nn.Dropout(o["dropout"])
        self.out = nn.Linear(o["hidden"], o["steps_out"])

    def forward(self, past, tod, sensor):
        steps = past.size(1)
        ctx = torch.cat([tod, self.sensor(sensor)], dim=1).unsqueeze(1).expand(-1, steps, -1)
        h, _ = self.gru(torch.cat([past.unsqueeze(-1), ctx], dim=2))
        return self.out(self.drop(h[:, -1]))


def masked_mae(pred, target):
    mask = (target > 0).float()
    return (torch.abs(pred - target) * mask).sum() / mask.sum().clamp(min=1)


class ForecastTrainer:
    def __init__(self, model, opts, mean, std):
        self.model, self.o, self.mean, self.std = model, opts, mean, std
        self.optimizer = torch.optim.Adam(model.parameters(), lr=opts["lr"])
        self.best, self.bad_epochs, self.best_state = float("inf"), 0, None

    def denorm(self, y):
        return y * self.std + self.mean

    def training_step(self, batch):
        past, tod, sensor, future = batch
        loss = masked_mae(self.denorm(self.model(past, tod, sensor)), future)
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)
        self.optimizer.step()
        return loss.item()

    def validate(self, loader):
        self.model.eval()
        err, weight = 0.0, 0.0
        with torch.no_grad():
            for past, tod, sensor, future in loader:
                pred = self.denorm(self.model(past, tod, sensor))
                n = (future > 0).sum().item()
                err += masked_mae(pred, future).item() * n
                weight += n
        return err / max(weight, 1)

    def on_epoch_end(self, epoch, valid_loader):
        mae = self.validate(valid_loader)
        print(f"epoch {epoch:02d} valid MAE {mae:.3f} mph")
        if mae < self.best:
            self.best, self.bad_epochs = mae, 0
            self.best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        else:
            self.bad_epochs += 1
        return self.bad_epochs > self.o["patience"]

    def fit(self, train_loader, valid_loader):
        self.model.train()
        for epoch in range(self.o["epochs"]):
            losses = [self.training_step(batch) for batch in train_loader]
            print(f"epoch {epoch:02d} train MAE {np.mean(losses):.3f} mph")
            if self.on_epoch_end(epoch, valid_loader):
                break
        self.model.load_state_dict(self.best_state)
        return self.best


def main(o=OPTS):
    torch.manual_seed(o["seed"])
    speeds = np.load(o["file"])
    n_train, n_valid = int(0.7 * len(speeds)), int(0.1 * len(speeds))
    observed = speeds[:n_train][speeds[:n_train] > 0]
    mean, std = float(observed.mean()), float(observed.std())
    train = SensorWindows(speeds, 0, n_train, o["steps_in"], o["steps_out"], mean, std)
    valid = SensorWindows(speeds, n_train, n_train + n_valid, o["steps_in"], o["steps_out"], mean, std)
    test = SensorWindows(speeds, n_train + n_valid, len(speeds), o["steps_in"], o["steps_out"], mean, std)
    loaders = [DataLoader(train, o["batch"], shuffle=True, num_workers=4, drop_last=True),
               DataLoader(valid, 4096, num_workers=4), DataLoader(test, 4096, num_workers=4)]

    trainer = ForecastTrainer(SpeedGRU(speeds.shape[1], o), o, mean, std)
    best = trainer.fit(loaders[0], loaders[1])
    print(f"best valid MAE {best:.3f}; test MAE {trainer.validate(loaders[2]):.3f} mph")
    torch.save(trainer.model.state_dict(), "metr_la_gru.pt")


if __name__ == "__main__":
    main()
