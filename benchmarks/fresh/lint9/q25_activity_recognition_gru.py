"""Human activity recognition from smartphone accelerometer + gyroscope bouts.

Each recording is one bout of a single activity (2-20 s at 50 Hz), stored as
<root>/<activity>/<subject>_<bout>.csv with columns ax, ay, az, gx, gy, gz.
Subjects 1-24 train, 25-30 validate.
"""
import glob
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

ROOT = "data/har_bouts"
ACTIVITIES = ["walking", "upstairs", "downstairs", "sitting", "standing", "lying", "cycling", "running"]
VAL_SUBJECTS = set(range(25, 31))
CHANNELS = ["ax", "ay", "az", "gx", "gy", "gz"]
HIDDEN, LAYERS, BATCH, EPOCHS, LR = 96, 2, 32, 40, 2e-3


def list_recordings(root):
    records = []
    for label, activity in enumerate(ACTIVITIES):
        for path in sorted(glob.glob(os.path.join(root, activity, "*.csv"))):
            subject = int(os.path.basename(path).split("_")[0])
            records.append((path, label, subject))
    return records


def channel_stats(records):
    data = np.concatenate([pd.read_csv(p)[CHANNELS].to_numpy(np.float32) for p, _, _ in records])
    return data.mean(0), data.std(0) + 1e-6


class Bouts(Dataset):
    def __init__(self, records, mean, std):
        self.signals = [torch.from_numpy((pd.read_csv(p)[CHANNELS].to_numpy(np.float32) - mean) / std)
                        for p, _, _ in records]
        self.labels = [label for _, label, _ in records]

    def __len__(self):
        return len(self.signals)

    def __getitem__(self, i):
        return self.signals[i], self.labels[i]


def pad_collate(batch):
    signals, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in signals])
    return pad_sequence(signals, batch_first=True), lengths, torch.tensor(labels)


def make_loader(dataset, batch_size, drop_last=False):
    return DataLoader(dataset, batch_size=batch_size, collate_fn=pad_collate, drop_last=drop_last, num_workers=2)


class ActivityGRU(nn.Module):
    def __init__(self, n_in, hidden, layers, n_classes):
        super().__init__()
        self.proj = nn.Linear(n_in, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=layers, batch_first=True, dropout=0.2)
        self.head = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, n_classes))

    def forward(self, x):
        _, h_n = self.gru(torch.relu(self.proj(x)))
        return self.head(h_n[-1])


def train_epoch(model, loader, optimizer, device):
    model.train()
    total, n = 0.0, 0
    for x, _, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total += loss.item() * y.size(0)
        n += y.size(0)
    return total / n


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    confusion = torch.zeros(len(ACTIVITIES), len(ACTIVITIES), dtype=torch.long)
    for x, _, y in loader:
        pred = model(x.to(device)).argmax(1).cpu()
        confusion += torch.bincount(y * len(ACTIVITIES) + pred, minlength=len(ACTIVITIES) ** 2).view_as(confusion)
    acc = confusion.diag().sum().item() / confusion.sum().item()
    recall = confusion.diag().float() / confusion.sum(1).clamp(min=1).float()
    return acc, recall


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    records = list_recordings(ROOT)
    train_rec = [r for r in records if r[2] not in VAL_SUBJECTS]
    val_rec = [r for r in records if r[2] in VAL_SUBJECTS]
    mean, std = channel_stats(train_rec)
    train_dl = make_loader(Bouts(train_rec, mean, std), BATCH, drop_last=True)
    val_dl = make_loader(Bouts(val_rec, mean, std), 128)
    print(f"{len(train_rec)} training bouts, {len(val_rec)} validation bouts")

    model = ActivityGRU(len(CHANNELS), HIDDEN, LAYERS, len(ACTIVITIES)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.3)
    best = 0.0
    for epoch in range(EPOCHS):
        loss = train_epoch(model, train_dl, optimizer, device)
        acc, recall = evaluate(model, val_dl, device)
        scheduler.step()
        print(f"epoch {epoch + 1:02d} loss {loss:.4f} val acc {acc:.4f} "
              + " ".join(f"{a[:4]}={r:.2f}" for a, r in zip(ACTIVITIES, recall.tolist())))
        if acc > best:
            best = acc
            torch.save({"model": model.state_dict(), "mean": mean.tolist(), "std": std.tolist()}, "har_gru.pt")
    print(f"best validation accuracy {best:.4f}")


if __name__ == "__main__":
    main()
