import argparse
import copy
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_frequency(path):
    values = np.loadtxt(path, delimiter=",", skiprows=1, usecols=1, dtype=np.float64)
    return torch.tensor(values, dtype=torch.float32)


def to_streams(series, n_streams):
    usable = (series.numel() - 1) // n_streams * n_streams
    inputs = series[:usable].view(n_streams, -1)
    targets = series[1:usable + 1].view(n_streams, -1)
    return inputs, targets


class StreamForecaster(nn.Module):
    def __init__(self, hidden=64, layers=2, mean=0.0, std=1.0):
        super().__init__()
        self.register_buffer("mean", torch.tensor(float(mean)))
        self.register_buffer("std", torch.tensor(float(std)))
        self.lstm = nn.LSTM(1, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, state=None):
        z = ((x - self.mean) / self.std).unsqueeze(-1)
        h, state = self.lstm(z, state)
        return self.out(h).squeeze(-1) * self.std + self.mean, state


def detach_state(state):
    return tuple(s.detach() for s in state)


def run_epoch(model, inputs, targets, bptt, optimizer=None):
    training = optimizer is not None
    model.train(training)
    state, total, steps = None, 0.0, 0
    with torch.set_grad_enabled(training):
        for start in range(0, inputs.shape[1], bptt):
            x = inputs[:, start:start + bptt]
            y = targets[:, start:start + bptt]
            pred, state = model(x, state)
            loss = F.mse_loss(pred, y)
            if training:
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
            state = detach_state(state)
            total += loss.item() * x.shape[1]
            steps += x.shape[1]
    return total / max(steps, 1)


class BestKeeper:
    def __init__(self, patience):
        self.patience = patience
        self.best = math.inf
        self.state = None
        self.wait = 0

    def update(self, model, value):
        if value < self.best:
            self.best = value
            self.state = copy.deepcopy(model.state_dict())
            self.wait = 0
            return False
        self.wait += 1
        return self.wait > self.patience


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", default="data/grid_frequency_1s.csv")
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--bptt", type=int, default=120)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--patience", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(1)
    series = load_frequency(args.csv)
    split = int(0.85 * series.numel())
    train_x, train_y = to_streams(series[:split], args.streams)
    valid_x, valid_y = to_streams(series[split:], args.streams)
    model = StreamForecaster(mean=train_x.mean().item(), std=train_x.std().item())
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    keeper = BestKeeper(args.patience)
    for epoch in range(args.epochs):
        train_loss = run_epoch(model, train_x, train_y, args.bptt, optimizer)
        valid_loss = run_epoch(model, valid_x, valid_y, args.bptt)
        print(f"epoch {epoch}: train mse {train_loss:.6f} valid mse {valid_loss:.6f}")
        if keeper.update(model, valid_loss):
            print("stopping early")
            break
    model.load_state_dict(keeper.state)
    torch.save(model.state_dict(), "grid_frequency_lstm.pt")


if __name__ == "__main__":
    main()
