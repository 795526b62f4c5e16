"""Daily streamflow for one CAMELS basin from 365 days of meteorological forcings (LSTM).

Chronological split: 1980-1995 train, 1995-2000 validation, 2000-2010 test. Early stopping
on validation NSE; the best weights are restored before testing.
"""
import argparse

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FORCINGS = ["prcp(mm/day)", "srad(W/m2)", "tmax(C)", "tmin(C)", "vp(Pa)", "dayl(s)"]
TARGET = "QObs(mm/d)"


class Windows(Dataset):
    def __init__(self, x, y, seq_len):
        self.x, self.y, self.seq_len = x, y, seq_len
        self.valid = [t for t in range(seq_len, len(y)) if not np.isnan(y[t])]

    def __len__(self):
        return len(self.valid)

    def __getitem__(self, i):
        t = self.valid[i]
        return torch.from_numpy(self.x[t - self.seq_len:t]), torch.tensor(self.y[t], dtype=torch.float32)


class DischargeLSTM(nn.Module):
    def __init__(self, n_in, hidden=128, dropout=0.4):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(self.drop(out[:, -1])).squeeze(-1)


def nse(sim, obs):
    return 1.0 - np.sum((sim - obs) ** 2) / np.sum((obs - obs.mean()) ** 2)


class EarlyStoppingTrainer:
    def __init__(self, model, lr, patience, device):
        self.model, self.device, self.patience = model.to(device), device, patience
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.loss_fn = nn.MSELoss()
        self.best_nse, self.best_state, self.bad_epochs = -np.inf, None, 0

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            loss = self.loss_fn(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=1.0)
            self.optimizer.step()
            total += loss.item() * len(y)
            n += len(y)
        return total / n

    @torch.no_grad()
    def predict(self, loader):
        self.model.eval()
        return torch.cat([self.model(x.to(self.device)).cpu() for x, _ in loader]).numpy()

    def check(self, score):
        if score > self.best_nse:
            self.best_nse, self.bad_epochs = score, 0
            self.best_state = self.model.state_dict().copy()
            return False
        self.bad_epochs += 1
        return self.bad_epochs >= self.patience

    def restore_best(self):
        self.model.load_state_dict(self.best_state)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/camels/01022500_daily.csv")
    ap.add_argument("--seq-len", type=int, default=365)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--patience", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()
    torch.manual_seed(3)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    df = pd.read_csv(args.csv, parse_dates=["date"], index_col="date")
    df.loc[df[TARGET] < 0, TARGET] = np.nan
    parts = {"train": df["1980-10-01":"1995-09-30"], "valid": df["1995-10-01":"2000-09-30"],
             "test": df["2000-10-01":"2010-09-30"]}
    x_mu, x_sd = parts["train"][FORCINGS].mean(), parts["train"][FORCINGS].std()
    y_mu, y_sd = parts["train"][TARGET].mean(), parts["train"][TARGET].std()

    def make(part, shuffle):
        x = ((part[FORCINGS] - x_mu) / x_sd).to_numpy(np.float32)
        y = ((part[TARGET] - y_mu) / y_sd).to_numpy(np.float32)
        return DataLoader(Windows(x, y, args.seq_len), batch_size=256, shuffle=shuffle)

    train_dl, valid_dl, test_dl = make(parts["train"], True), make(parts["valid"], False), make(parts["test"], False)
    obs = {k: np.array([dl.dataset.y[t] for t in dl.dataset.valid]) * y_sd + y_mu
           for k, dl in (("valid", valid_dl), ("test", test_dl))}

    trainer = EarlyStoppingTrainer(DischargeLSTM(len(FORCINGS)), args.lr, args.patience, device)
    for epoch in range(args.epochs):
        loss = trainer.train_epoch(train_dl)
        score = nse(trainer.predict(valid_dl) * y_sd + y_mu, obs["valid"])
        print(f"epoch {epoch:3d} train MSE {loss:.4f} valid NSE {score:.3f}")
        if trainer.check(score):
            print(f"stopping: no improvement for {args.patience} epochs")
            break

    trainer.restore_best()
    print(f"test NSE {nse(trainer.predict(test_dl) * y_sd + y_mu, obs['test']):.3f} "
          f"(best valid {trainer.best_nse:.3f})")
    torch.save(trainer.model.state_dict(), "camels_lstm_best.pt")


if __name__ == "__main__":
    main()
