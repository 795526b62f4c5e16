import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class FishPhotos(Dataset):
    def __init__(self, root, species, files, size=128, train=False):
        self.items = [(root / f, species.index(f.split("/")[0])) for f in files]
        self.size = size
        self.train = train

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        img = Image.open(path).convert("RGB").resize((self.size, self.size))
        if self.train and random.random() < 0.5:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        x = torch.from_numpy(np.asarray(img).copy()).permute(2, 0, 1).float()
        return x, label


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))


class FishNet(nn.Module):
    def __init__(self, n_species):
        super().__init__()
        self.features = nn.Sequential(conv_block(3, 32), conv_block(32, 64), conv_block(64, 128), conv_block(128, 256))
        self.classifier = nn.Linear(256, n_species)

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
            total += len(y)
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("data/fish_market"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", type=Path, default=Path("runs/fish/best.pt"))
    args = ap.parse_args()

    random.seed(0)
    torch.manual_seed(0)
    split = json.loads((args.root / "split.json").read_text())
    species = sorted(split["species"])
    train_ds = FishPhotos(args.root, species, split["train"], train=True)
    val_ds = FishPhotos(args.root, species, split["val"])
    train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=4)
    val_dl = DataLoader(val_ds, batch_size=128, num_workers=4)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = FishNet(len(species)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    best = {"acc": 0.0, "epoch": -1, "weights": None}

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc = accuracy(model, val_dl, device)
        if acc > best["acc"]:
            best = {"acc": acc, "epoch": epoch, "weights": model.state_dict().copy()}
        print(f"epoch {epoch} val acc {acc:.3f} (best {best['acc']:.3f} @ {best['epoch']})")

    model.load_state_dict(best["weights"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "species": species, "val_acc": best["acc"]}, args.out)


if __name__ == "__main__":
    main()
