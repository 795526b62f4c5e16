import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_gauges(path):
    with open(path) as fh:
        record = json.load(fh)
    rain = np.asarray(record["rain_mm"], dtype=np.float32)
    level = np.asarray(record["level_m"], dtype=np.float32)
    return rain, level


def streams_of(array, n_streams):
    length = array.shape[0] // n_streams
    return array[: length * n_streams].reshape(n_streams, length, -1)


class StageModel(nn.Module):
    def __init__(self, n_in, hidden=64):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, h=None):
        out, h = self.gru(x, h)
        return self.head(out), h


def train_epoch(model, inputs, targets, optimizer, chunk, clip):
    model.train()
    h = None
    total, count = 0.0, 0
    for t in range(0, inputs.size(1), chunk):
        x = inputs[:, t : t + chunk]
        y = targets[:, t : t + chunk]
        if h is not None:
            h = h.detach()
        pred, h = model(x, h)
        loss = F.mse_loss(pred, y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        total += loss.item() * y.numel()
        count += y.numel()
    return total / count


@torch.no_grad()
def evaluate(model, inputs, targets):
    model.eval()
    pred, _ = model(inputs)
    return F.mse_loss(pred, targets).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gauges", default="gauge_record.json")
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--chunk", type=int, default=96)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--clip", type=float, default=1.0)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rain, level = load_gauges(args.gauges)
    split = int(0.8 * len(level))
    r_mu, r_sd = rain[:split].mean(), rain[:split].std() + 1e-6
    l_mu, l_sd = level[:split].mean(), level[:split].std() + 1e-6
    features = np.stack([(rain - r_mu) / r_sd, np.r_[0.0, np.diff(level)] / l_sd], axis=1).astype(np.float32)
    target = ((level - l_mu) / l_sd)[:, None]
    train_x = torch.from_numpy(streams_of(features[:split], args.streams)).to(device)
    train_y = torch.from_numpy(streams_of(target[:split], args.streams)).to(device)
    test_x = torch.from_numpy(features[split:][None]).to(device)
    test_y = torch.from_numpy(target[split:][None]).to(device)
    model = StageModel(features.shape[1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.3)
    for epoch in range(args.epochs):
        train_mse = train_epoch(model, train_x, train_y, optimizer, args.chunk, args.clip)
        scheduler.step()
        test_mse = evaluate(model, test_x, test_y)
        print(f"epoch {epoch}: train {train_mse:.4f} test {test_mse:.4f} rmse {np.sqrt(test_mse) * l_sd:.3f} m")
    torch.save(model.state_dict(), "stage_gru.pt")


if __name__ == "__main__":
    main()
