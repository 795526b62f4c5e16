"""Monthly mean sunspot number (SILSO, 1749-today): forecast the next 12 months from the last
22 years (264 months, two solar cycles) with a two-layer Elman RNN.
"""
import csv
import math
import random

import numpy as np
import torch
import torch.nn as nn

SILSO_CSV = "data/SN_m_tot_V2.0.csv"
HISTORY, HORIZON = 264, 12
HIDDEN, LAYERS = 128, 2
BATCH, EPOCHS = 32, 150
LR, MOMENTUM = 0.05, 0.9
TEST_MONTHS = 132
SEED = 31


def load_series(path):
    values = []
    with open(path) as f:
        for row in csv.reader(f, delimiter=";"):
            v = float(row[3])
            if v >= 0:
                values.append(v)
    return np.asarray(values, dtype=np.float32)


def make_windows(series):
    xs, ys = [], []
    for t in range(HISTORY, len(series) - HORIZON + 1):
        xs.append(series[t - HISTORY : t])
        ys.append(series[t : t + HORIZON])
    return torch.from_numpy(np.stack(xs)).unsqueeze(-1), torch.from_numpy(np.stack(ys))


class SunspotRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(1, HIDDEN, num_layers=LAYERS, nonlinearity="tanh", batch_first=True)
        self.head = nn.Linear(HIDDEN, HORIZON)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def batches(x, y, batch_size, shuffle):
    idx = torch.randperm(len(x)) if shuffle else torch.arange(len(x))
    for i in range(0, len(x), batch_size):
        j = idx[i : i + batch_size]
        yield x[j], y[j]


def evaluate(model, x, y, scale, device):
    model.eval()
    with torch.no_grad():
        pred = model(x.to(device)).cpu()
    return math.sqrt(((pred - y) ** 2).mean().item()) * scale


def main():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    series = load_series(SILSO_CSV)
    train_part, test_part = series[:-TEST_MONTHS], series[-(TEST_MONTHS + HISTORY + HORIZON) :]
    mean, scale = float(train_part.mean()), float(train_part.std())
    x_train, y_train = make_windows((train_part - mean) / scale)
    x_test, y_test = make_windows((test_part - mean) / scale)
    n_val = len(x_train) // 10
    x_val, y_val = x_train[-n_val:], y_train[-n_val:]
    x_train, y_train = x_train[: -n_val - HORIZON], y_train[: -n_val - HORIZON]

    model = SunspotRNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.2)
    loss_fn = nn.MSELoss()

    best, best_state = float("inf"), None
    for epoch in range(EPOCHS):
        model.train()
        total, n = 0.0, 0
        for xb, yb in batches(x_train, y_train, BATCH, shuffle=True):
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * xb.size(0)
            n += xb.size(0)
        scheduler.step()
        val_rmse = evaluate(model, x_val, y_val, scale, device)
        if val_rmse < best:
            best = val_rmse
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if epoch % 10 == 0:
            print(f"epoch {epoch:3d}  train mse {total / n:.4f}  val RMSE {val_rmse:.1f} spots")

    model.load_state_dict(best_state)
    print(f"val RMSE {best:.1f}  test RMSE {evaluate(model, x_test, y_test, scale, device):.1f} (sunspot number)")
    torch.save(model.state_dict(), "sunspot_rnn.pt")


if __name__ == "__main__":
    main()
