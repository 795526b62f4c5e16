import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset

DEFECTS = ["good", "hole", "stain", "broken_yarn", "knot", "oil_spot", "thick_bar"]


class LoomPatches(Dataset):
    def __init__(self, root, split, size=128, augment=False):
        self.items = [(p, DEFECTS.index(p.parent.name)) for p in sorted((Path(root) / split).glob("*/*.png"))]
        self.size, self.augment = size, augment

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        img = Image.open(path).convert("L").resize((self.size, self.size), Image.BILINEAR)
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0)[None]
        if self.augment:
            if torch.rand(()) < 0.5:
                x = x.flip(-1)
            if torch.rand(()) < 0.5:
                x = x.flip(-2)
        return (x - 0.5) / 0.2, label


class DefectNet(nn.Module):
    def __init__(self, n_classes, width=24):
        super().__init__()
        stages, cin = [], 1
        for mult in (1, 2, 4, 8):
            cout = width * mult
            stages.append(nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                nn.MaxPool2d(2),
            ))
            cin = cout
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, n_classes)

    def forward(self, x):
        feats = self.stages(x).mean(dim=(2, 3))
        return self.fc(feats).softmax(dim=-1)


def run(model, loader, device, criterion, optimizer=None):
    train = optimizer is not None
    model.train(train)
    total_loss, correct, n = 0.0, 0, 0
    with torch.set_grad_enabled(train):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss = criterion(out, y)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total_loss += loss.item() * len(y)
            correct += (out.argmax(dim=1) == y).sum().item()
            n += len(y)
    return total_loss / n, correct / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/tilda_patches")
    p.add_argument("--epochs", type=int, default=35)
    p.add_argument("--lr", type=float, default=0.05)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train = DataLoader(LoomPatches(args.root, "train", augment=True), batch_size=64, shuffle=True,
                       num_workers=4, drop_last=True)
    val = DataLoader(LoomPatches(args.root, "val"), batch_size=128, num_workers=4)
    model = DefectNet(len(DEFECTS)).to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.05)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best = 0.0
    for epoch in range(args.epochs):
        train_loss, train_acc = run(model, train, device, criterion, optimizer)
        val_loss, val_acc = run(model, val, device, criterion)
        sched.step()
        print(f"epoch {epoch}: train {train_loss:.3f}/{train_acc:.3f}  val {val_loss:.3f}/{val_acc:.3f}")
        if val_acc > best:
            best = val_acc
            torch.save(model.state_dict(), "defect_net_best.pt")


if __name__ == "__main__":
    main()
