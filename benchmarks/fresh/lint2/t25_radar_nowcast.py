"""Precipitation nowcasting: a ConvLSTM encoder-forecaster on radar reflectivity sequences.
Input: 10 frames (5-minute steps); output: the next 10 frames."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

DBZ_MAX = 70.0


class RadarSequences(Dataset):
    def __init__(self, path, n_in=10, n_out=10):
        self.frames = np.load(path, mmap_mode="r")  # (n_seq, 20, H, W) float16 dBZ
        self.n_in, self.n_out = n_in, n_out

    def __len__(self):
        return self.frames.shape[0]

    def __getitem__(self, i):
        seq = torch.from_numpy(np.array(self.frames[i], dtype=np.float32)).clamp(0, DBZ_MAX) / DBZ_MAX
        seq = seq.unsqueeze(1)  # (T, 1, H, W)
        return seq[: self.n_in], seq[self.n_in : self.n_in + self.n_out]


class ConvLSTMCell(nn.Module):
    def __init__(self, cin, hidden, k=3):
        super().__init__()
        self.hidden = hidden
        self.gates = nn.Conv2d(cin + hidden, 4 * hidden, k, padding=k // 2)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(torch.cat([x, h], dim=1)).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c

    def init_state(self, x):
        b, _, hgt, wid = x.shape
        zeros = x.new_zeros(b, self.hidden, hgt, wid)
        return zeros, zeros.clone()


class Nowcaster(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.down = nn.Conv2d(1, 16, 4, stride=4)  # 256 -> 64
        self.cell = ConvLSTMCell(16, hidden)
        self.up = nn.Sequential(nn.ConvTranspose2d(hidden, 16, 4, stride=4), nn.ReLU(), nn.Conv2d(16, 1, 3, padding=1))

    def forward(self, past, n_future):  # past: (B, T, 1, H, W)
        state = None
        for t in range(past.size(1)):
            x = F.relu(self.down(past[:, t]))
            state = self.cell(x, state if state is not None else self.cell.init_state(x))
        frame, outputs = past[:, -1], []
        for _ in range(n_future):
            state = self.cell(F.relu(self.down(frame)), state)
            frame = torch.sigmoid(self.up(state[0]))
            outputs.append(frame)
        return torch.stack(outputs, dim=1)  # (B, n_future, 1, H, W)


def weighted_loss(pred, target):
    weight = 1.0 + 4.0 * (target > 30.0 / DBZ_MAX).float()  # heavier weight on convective cells
    return (weight * ((pred - target) ** 2 + (pred - target).abs())).mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/radar_train.npy")
    ap.add_argument("--valid", default="data/radar_valid.npy")
    ap.add_argument("--epochs", type=int, default=40)
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_loader = DataLoader(RadarSequences(args.train), batch_size=8, shuffle=True, num_workers=4)
    valid_loader = DataLoader(RadarSequences(args.valid), batch_size=8, num_workers=4)
    model = Nowcaster().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[20, 32], gamma=0.1, verbose=True)

    for epoch in range(args.epochs):
        model.train()
        for past, future in train_loader:
            past, future = past.to(device), future.to(device)
            loss = weighted_loss(model(past, future.size(1)), future)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        scheduler.step()

        model.eval()
        mse_sum, n = 0.0, 0
        with torch.no_grad():
            for past, future in valid_loader:
                pred = model(past.to(device), future.size(1)).cpu()
                mse_sum += F.mse_loss(pred * DBZ_MAX, future * DBZ_MAX, reduction="sum").item()
                n += future.numel()
        print(f"epoch {epoch}: valid RMSE {np.sqrt(mse_sum / n):.2f} dBZ")
    torch.save(model.state_dict(), "nowcaster.pt")


if __name__ == "__main__":
    main()
