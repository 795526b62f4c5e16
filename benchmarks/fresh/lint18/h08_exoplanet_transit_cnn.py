import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "batch_size": 64,
    "epochs": 50,
    "lr": 1e-3,
}


class FoldedLightCurves(Dataset):
    def __init__(self, path):
        data = np.load(path)
        self.global_view = data["global_view"].astype(np.float32)
        self.local_view = data["local_view"].astype(np.float32)
        self.is_planet = data["is_planet"].astype(np.float32)

    def __len__(self):
        return len(self.is_planet)

    def __getitem__(self, i):
        g, l = self.global_view[i], self.local_view[i]
        g = (g - np.median(g)) / (np.abs(g.min() - np.median(g)) + 1e-6)
        l = (l - np.median(l)) / (np.abs(l.min() - np.median(l)) + 1e-6)
        return torch.from_numpy(g)[None], torch.from_numpy(l)[None], torch.tensor(self.is_planet[i])


def column(channels, pool):
    layers, cin = [], 1
    for cout in channels:
        layers += [nn.Conv1d(cin, cout, 5, padding=2), nn.ReLU(), nn.Conv1d(cout, cout, 5, padding=2), nn.ReLU(),
                   nn.MaxPool1d(pool[0], stride=pool[1])]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveMaxPool1d(4), nn.Flatten())


class TransitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.global_col = column([16, 32, 64, 128], (5, 2))
        self.local_col = column([16, 32], (7, 2))
        self.fc = nn.Sequential(nn.Linear(128 * 4 + 32 * 4, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 1))

    def forward(self, g, l):
        return self.fc(torch.cat([self.global_col(g), self.local_col(l)], dim=1)).squeeze(1)


def evaluate(model, loader):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        for g, l, y in loader:
            hits += ((model(g, l) > 0).float() == y).sum().item()
            total += len(y)
    return hits / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/kepler_tce_train.npz")
    p.add_argument("--val", default="data/kepler_tce_val.npz")
    for key, value in CONFIG.items():
        p.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value)
    cfg = vars(p.parse_args())

    train = DataLoader(FoldedLightCurves(cfg["train"]), batch_size=cfg["batch_size"], shuffle=True)
    val = DataLoader(FoldedLightCurves(cfg["val"]), batch_size=256)
    model = TransitNet()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg["epochs"], eta_min=1e-5)
    positives = train.dataset.is_planet.mean()
    pos_weight = torch.tensor((1 - positives) / positives, dtype=torch.float32)

    for epoch in range(cfg["epochs"]):
        model.train()
        total, seen = 0.0, 0
        for g, l, y in train:
            loss = F.binary_cross_entropy_with_logits(model(g, l), y, pos_weight=pos_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(y)
            seen += len(y)
        print(f"epoch {epoch}: loss {total / seen:.4f} lr {sched.get_last_lr()[0]:.2e} val acc {evaluate(model, val):.3f}")
    torch.save(model.state_dict(), "transit_net.pt")


if __name__ == "__main__":
    main()
