import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SETTINGS = {
    "data_glob": "data/cgm/patient_*.csv",
    "chunk": 96,
    "horizon": 6,
    "hidden": 64,
    "layers": 1,
    "epochs": 15,
    "lr": 3e-3,
    "holdout_patients": 3,
    "checkpoint": "checkpoints/cgm_lstm.pt",
}


def read_patient(path):
    rows = np.genfromtxt(path, delimiter=",", names=True)
    glucose = rows["glucose_mgdl"].astype(np.float32)
    carbs = rows["carbs_g"].astype(np.float32)
    insulin = rows["bolus_units"].astype(np.float32)
    glucose = np.interp(np.arange(len(glucose)), np.flatnonzero(~np.isnan(glucose)), glucose[~np.isnan(glucose)])
    x = np.stack([(glucose - 140.0) / 50.0, carbs / 50.0, insulin / 5.0], axis=1).astype(np.float32)
    return torch.from_numpy(x)


def targets_for(x, horizon):
    future = torch.roll(x[:, 0], shifts=-horizon)
    future[-horizon:] = float("nan")
    return future


class GlucoseRNN(nn.Module):
    def __init__(self, n_in, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.state = None

    def reset(self):
        self.state = None

    def forward(self, x):
        out, self.state = self.lstm(x, self.state)
        return self.head(out).squeeze(-1)


def masked_mse(pred, target):
    valid = ~torch.isnan(target)
    return F.mse_loss(pred[valid], target[valid]) if valid.any() else pred.sum() * 0.0


class StreamTrainer:
    def __init__(self, model, cfg):
        self.model = model
        self.cfg = cfg
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def train_patient(self, x):
        self.model.train()
        self.model.reset()
        y = targets_for(x, self.cfg["horizon"])
        total, count = 0.0, 0
        for start in range(0, len(x), self.cfg["chunk"]):
            xb = x[start:start + self.cfg["chunk"]].unsqueeze(0)
            yb = y[start:start + self.cfg["chunk"]].unsqueeze(0)
            loss = masked_mse(self.model(xb), yb)
            self.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            n = int((~torch.isnan(yb)).sum())
            total += loss.item() * n
            count += n
        return total / max(count, 1)

    @torch.no_grad()
    def rmse_mgdl(self, x):
        self.model.eval()
        self.model.reset()
        y = targets_for(x, self.cfg["horizon"])
        pred = self.model(x.unsqueeze(0)).squeeze(0)
        valid = ~torch.isnan(y)
        return torch.sqrt(((pred[valid] - y[valid]) ** 2).mean()).item() * 50.0

    def save(self, path, epoch):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "epoch": epoch}, path)


def main(cfg=SETTINGS):
    torch.manual_seed(0)
    paths = sorted(glob.glob(cfg["data_glob"]))
    streams = [read_patient(p) for p in paths]
    holdout = cfg["holdout_patients"]
    train_streams, test_streams = streams[:-holdout], streams[-holdout:]
    model = GlucoseRNN(3, cfg["hidden"], cfg["layers"])
    trainer = StreamTrainer(model, cfg)
    rng = np.random.default_rng(0)
    for epoch in range(cfg["epochs"]):
        order = rng.permutation(len(train_streams))
        train_loss = np.mean([trainer.train_patient(train_streams[i]) for i in order])
        rmse = np.mean([trainer.rmse_mgdl(x) for x in test_streams])
        print(f"epoch {epoch}: train {train_loss:.4f} test RMSE {rmse:.1f} mg/dL at {cfg['horizon'] * 5} min")
        trainer.save(cfg["checkpoint"], epoch)


if __name__ == "__main__":
    main()
