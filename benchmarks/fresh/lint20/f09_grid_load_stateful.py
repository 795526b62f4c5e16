import argparse
import math

import numpy as np
import torch
import torch.nn as nn


def calendar_features(hours):
    hour = hours % 24
    dow = (hours // 24) % 7
    return np.stack([np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24), np.sin(2 * np.pi * dow / 7), np.cos(2 * np.pi * dow / 7)], axis=1)


def batchify(series, streams):
    usable = (len(series) // streams) * streams
    return series[:usable].reshape(streams, -1, series.shape[-1])


class LoadLSTM(nn.Module):
    def __init__(self, n_in, hidden, layers):
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.rnn = nn.LSTM(n_in, hidden, num_layers=layers, batch_first=True)
        self.proj = nn.Linear(hidden, 1)

    def init_state(self, batch, device):
        shape = (self.layers, batch, self.hidden)
        return torch.zeros(shape, device=device), torch.zeros(shape, device=device)

    def forward(self, x, state):
        out, state = self.rnn(x, state)
        return self.proj(out).squeeze(-1), state


def run(model, data, args, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    state = model.init_state(data.size(0), device)
    total, steps = 0.0, 0
    for start in range(0, data.size(1) - 1, args.bptt):
        chunk = data[:, start : start + args.bptt + 1]
        x, y = chunk[:, :-1], chunk[:, 1:, 0]
        with torch.set_grad_enabled(training):
            pred, state = model(x, state)
            loss = nn.functional.mse_loss(pred, y)
        if training:
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
        total += loss.item() * y.numel()
        steps += y.numel()
    return total / steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", default="zone_load.npy")
    parser.add_argument("--streams", type=int, default=16)
    parser.add_argument("--bptt", type=int, default=168)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--clip", type=float, default=0.5)
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    load = np.load(args.load).astype(np.float32)
    split = int(0.9 * len(load))
    mu, sigma = load[:split].mean(), load[:split].std()
    feats = np.concatenate([((load - mu) / sigma)[:, None], calendar_features(np.arange(len(load)))], axis=1)
    feats = torch.from_numpy(feats.astype(np.float32))
    train = batchify(feats[:split], args.streams).to(device)
    valid = batchify(feats[split:], 1).to(device)
    model = LoadLSTM(feats.shape[1], args.hidden, args.layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(args.epochs):
        train_mse = run(model, train, args, device, optimizer)
        valid_mse = run(model, valid, args, device)
        print(f"epoch {epoch}: train rmse {math.sqrt(train_mse) * sigma:.1f} MW  valid rmse {math.sqrt(valid_mse) * sigma:.1f} MW")
    torch.save(model.state_dict(), "load_lstm.pt")


if __name__ == "__main__":
    main()
