"""Galaxy10 DECaLS morphology classifier (10 classes) trained from scratch.

Images are exported per class: data/galaxy10/{train,val}/<class_name>/*.png
"""
import argparse
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, WeightedRandomSampler
from torchvision import datasets, transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/galaxy10")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--balanced", action="store_true", help="draw classes with equal probability")
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.SiLU(),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.SiLU(),
        nn.MaxPool2d(2),
    )


class GalaxyCNN(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(block(3, 32), block(32, 64), block(64, 128), block(128, 256))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(256, n_classes))

    def forward(self, x):
        return self.fc(self.pool(self.features(x)))


def param_groups(model, weight_decay):
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def balanced_sampler(ds):
    counts = np.bincount(ds.targets)
    weights = 1.0 / counts[ds.targets]
    return WeightedRandomSampler(torch.as_tensor(weights, dtype=torch.double), num_samples=len(ds))


def make_loader(ds, batch_size, workers, sampler=None, drop_last=False):
    return DataLoader(ds, batch_size=batch_size, sampler=sampler, num_workers=workers,
                      pin_memory=True, drop_last=drop_last)


@torch.no_grad()
def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x.to(device)).argmax(dim=1).cpu() == y).sum().item()
        total += y.size(0)
    return correct / total


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    norm = transforms.Normalize([0.17, 0.16, 0.15], [0.13, 0.12, 0.11])
    train_tf = transforms.Compose([
        transforms.RandomRotation(180), transforms.RandomHorizontalFlip(),
        transforms.CenterCrop(192), transforms.Resize(128), transforms.ToTensor(), norm,
    ])
    val_tf = transforms.Compose([transforms.CenterCrop(192), transforms.Resize(128), transforms.ToTensor(), norm])
    train_ds = datasets.ImageFolder(f"{args.data}/train", transform=train_tf)
    val_ds = datasets.ImageFolder(f"{args.data}/val", transform=val_tf)
    sampler = balanced_sampler(train_ds) if args.balanced else None
    train_dl = make_loader(train_ds, args.batch_size, args.workers, sampler=sampler, drop_last=True)
    val_dl = make_loader(val_ds, 256, args.workers)

    model = GalaxyCNN(len(train_ds.classes)).to(device)
    opt = torch.optim.AdamW(param_groups(model, args.weight_decay), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * len(train_dl))
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        total, seen = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * x.size(0)
            seen += x.size(0)
        print(f"epoch {epoch:2d}  loss {total / seen:.4f}  val acc {accuracy(model, val_dl, device):.3f}")
    torch.save(model.state_dict(), "galaxy_cnn.pt")


if __name__ == "__main__":
    main()
