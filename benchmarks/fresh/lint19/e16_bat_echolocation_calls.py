import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class CallSpectrograms(Dataset):
    def __init__(self, root, entries, species, augment, seed=1234):
        self.root, self.entries, self.species, self.augment = Path(root), entries, species, augment
        self.rng = np.random.RandomState(seed)

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, i):
        e = self.entries[i]
        spec = np.load(self.root / e["spec"]).astype(np.float32)
        spec = (spec - spec.mean()) / (spec.std() + 1e-5)
        if self.augment:
            shift = self.rng.randint(-12, 13)
            spec = np.roll(spec, shift, axis=1)
            spec = spec + self.rng.normal(0.0, 0.05, size=spec.shape).astype(np.float32)
            if self.rng.rand() < 0.3:
                f0 = self.rng.randint(0, spec.shape[0] - 8)
                spec[f0:f0 + 8] = 0.0
        return torch.from_numpy(spec)[None], self.species.index(e["species"])


class BatCallNet(nn.Module):
    def __init__(self, n_species):
        super().__init__()
        c = [1, 32, 64, 128, 128]
        self.blocks = nn.Sequential(*[
            nn.Sequential(nn.Conv2d(c[k], c[k + 1], 3, padding=1, bias=False), nn.BatchNorm2d(c[k + 1]),
                          nn.ReLU(), nn.MaxPool2d(2))
            for k in range(4)
        ])
        self.fc = nn.Linear(c[-1], n_species)

    def forward(self, x):
        return self.fc(self.blocks(x).amax(dim=(2, 3)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/bat_calls")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--amp", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(12)
    index = json.loads((Path(args.root) / "index.json").read_text())
    species = sorted({e["species"] for e in index["train"]})
    train_ds = CallSpectrograms(args.root, index["train"], species, augment=True)
    val_ds = CallSpectrograms(args.root, index["val"], species, augment=False)
    train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=args.workers, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=128, num_workers=args.workers)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = args.amp and device.type == "cuda"
    model = BatCallNet(len(species)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=use_amp):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for x, y in val_dl:
                correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
                total += len(y)
        print(f"epoch {epoch} val acc {correct / total:.3f}")
    torch.save({"model": model.state_dict(), "species": species}, Path(args.root) / "bat_call_net.pt")


if __name__ == "__main__":
    main()
