"""Earthquake vs. noise vs. quarry-blast classification of 3-component seismograms
(60 s windows at 100 Hz, Z/N/E), for a regional network's automatic event screening."""

import h5py
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CLASSES = ["noise", "earthquake", "blast"]


class Waveforms(Dataset):
    def __init__(self, path, split):
        self.path, self.split = path, split
        with h5py.File(path, "r") as f:
            self.keys = list(f[split].keys())
            self.labels = [int(f[split][k].attrs["label"]) for k in self.keys]
        self.file = None

    def __len__(self):
        return len(self.keys)

    def __getitem__(self, i):
        if self.file is None:  # opened lazily, once per worker process
            self.file = h5py.File(self.path, "r")
        trace = self.file[self.split][self.keys[i]][()].astype(np.float32)  # (3, 6000)
        trace = trace - trace.mean(axis=1, keepdims=True)
        trace = trace / (np.abs(trace).max() + 1e-8)
        return torch.from_numpy(trace), self.labels[i]


class EventNet(nn.Module):
    def __init__(self, p_drop=0.3):
        super().__init__()
        chans = [3, 16, 32, 64, 64, 128]
        self.convs = nn.ModuleList(nn.Conv1d(a, b, 7, padding=3, bias=False) for a, b in zip(chans, chans[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm1d(b) for b in chans[1:])
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, len(CLASSES))
        self.p_drop = p_drop

    def forward(self, x):
        for conv, norm in zip(self.convs, self.norms):
            x = F.max_pool1d(F.relu(norm(conv(x))), 4 if x.size(-1) >= 64 else 1)
        x = x.mean(dim=-1)
        x = F.dropout(F.relu(self.fc1(x)), p=self.p_drop)
        return self.fc2(x)


@torch.no_grad()
def confusion(model, loader, device):
    model.eval()
    cm = torch.zeros(len(CLASSES), len(CLASSES), dtype=torch.long)
    for x, y in loader:
        pred = model(x.to(device)).argmax(dim=1).cpu()
        cm += torch.bincount(y * len(CLASSES) + pred, minlength=len(CLASSES) ** 2).view(len(CLASSES), -1)
    return cm


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = Waveforms("data/regional_events.h5", "train")
    val_ds = Waveforms("data/regional_events.h5", "val")
    counts = np.bincount(train_ds.labels, minlength=len(CLASSES))
    weights = torch.tensor(counts.sum() / (len(CLASSES) * counts), dtype=torch.float32, device=device)

    train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=256, num_workers=4)
    model = EventNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss(weight=weights)

    for epoch in range(40):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        cm = confusion(model, val_dl, device)
        recall = (cm.diag().float() / cm.sum(dim=1).clamp(min=1)).tolist()
        print(f"epoch {epoch}: loss {loss.item():.3f} recall " +
              " ".join(f"{c}={r:.3f}" for c, r in zip(CLASSES, recall)))
    torch.save(model.state_dict(), "eventnet.pt")


if __name__ == "__main__":
    main()
