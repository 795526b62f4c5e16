"""Polyphonic music modelling on piano rolls (Nottingham / JSB-style), truncated BPTT with a GRU.

Each song is an (T, 88) binary piano roll at 16th-note resolution. Songs are concatenated into
one long roll, cut into parallel streams, and the GRU carries its hidden state across windows.
"""
import math
import pickle
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROLLS = "data/nottingham_rolls.pkl"
KEYS = 88
STREAMS = 32
WINDOW = 100
HIDDEN = 384
LAYERS = 2
EPOCHS = 40
LR = 1e-3
CLIP_NORM = 0.5
SEED = 2


class RollGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(KEYS, HIDDEN)
        self.gru = nn.GRU(HIDDEN, HIDDEN, num_layers=LAYERS, batch_first=True, dropout=0.3)
        self.out = nn.Linear(HIDDEN, KEYS)

    def forward(self, roll, h=None):
        y, h = self.gru(torch.relu(self.inp(roll)), h)
        return self.out(y), h


def to_streams(songs, n_streams):
    roll = np.concatenate(songs, axis=0).astype(np.float32)
    steps = roll.shape[0] // n_streams
    roll = roll[: steps * n_streams].reshape(n_streams, steps, KEYS)
    return torch.from_numpy(roll)


def run(model, streams, device, optimizer=None):
    train = optimizer is not None
    model.train(train)
    h = None
    nll_sum, frames = 0.0, 0
    with torch.set_grad_enabled(train):
        for start in range(0, streams.size(1) - 1, WINDOW):
            end = min(start + WINDOW, streams.size(1) - 1)
            x = streams[:, start:end].to(device)
            y = streams[:, start + 1 : end + 1].to(device)
            if h is not None:
                h = h.detach()
            logits, h = model(x, h)
            loss = F.binary_cross_entropy_with_logits(logits, y, reduction="sum") / (y.size(0) * y.size(1))
            if train:
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
                optimizer.step()
            nll_sum += loss.item() * y.size(0) * y.size(1)
            frames += y.size(0) * y.size(1)
    return nll_sum / frames


def generate(model, steps, device, threshold_temp=1.0):
    model.eval()
    frame = torch.zeros(1, 1, KEYS, device=device)
    h, frames = None, []
    with torch.no_grad():
        for _ in range(steps):
            logits, h = model(frame, h)
            frame = torch.bernoulli(torch.sigmoid(logits / threshold_temp))
            frames.append(frame.squeeze(0).squeeze(0).cpu())
    return torch.stack(frames)


def main():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    with open(ROLLS, "rb") as f:
        data = pickle.load(f)
    train_songs = list(data["train"])
    random.shuffle(train_songs)
    valid = to_streams(data["valid"], 8)

    model = RollGRU().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.5)

    best = math.inf
    for epoch in range(1, EPOCHS + 1):
        random.shuffle(train_songs)
        train_nll = run(model, to_streams(train_songs, STREAMS), device, optimizer)
        valid_nll = run(model, valid, device)
        scheduler.step()
        print(f"epoch {epoch:02d}  train NLL/frame {train_nll:.3f}  valid NLL/frame {valid_nll:.3f}")
        if valid_nll < best:
            best = valid_nll
            torch.save(model.state_dict(), "roll_gru.pt")

    sample = generate(model, 256, device)
    np.save("sample_roll.npy", sample.numpy().astype(np.uint8))
    print(f"best valid NLL/frame {best:.3f}; wrote a {tuple(sample.shape)} sample roll")


if __name__ == "__main__":
    main()
