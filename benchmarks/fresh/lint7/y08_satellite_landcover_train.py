"""Land-cover classification of 64x64 Sentinel-2 RGB tiles (EuroSAT layout, 10 classes).

The ResNet-34 stem and first two stages keep their ImageNet weights; the rest is fine-tuned.
"""
import argparse
import os
import random

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, random_split
from torchvision import models

MEAN = torch.tensor([0.344, 0.380, 0.408]).view(3, 1, 1)
STD = torch.tensor([0.203, 0.137, 0.115]).view(3, 1, 1)


def to_chw_tensor(img_bgr):
    rgb = cv2.cvtColor(img_bgr, cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0
    h, w, _ = rgb.shape
    return torch.from_numpy(rgb).view(3, h, w)


class EuroSATTiles(Dataset):
    def __init__(self, root, augment=False):
        self.classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.samples = [
            (os.path.join(root, c, f), i)
            for i, c in enumerate(self.classes)
            for f in sorted(os.listdir(os.path.join(root, c)))
            if f.endswith((".jpg", ".png"))
        ]
        self.augment = augment

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        path, label = self.samples[idx]
        x = to_chw_tensor(cv2.imread(path, cv2.IMREAD_COLOR))
        if self.augment:
            if torch.rand(()) < 0.5:
                x = x.flip(-1)
            if torch.rand(()) < 0.5:
                x = x.flip(-2)
            x = torch.rot90(x, int(torch.randint(0, 4, ())), dims=(-2, -1))
        return (x - MEAN) / STD, label


def freeze_early_layers(model):
    for block in (model.conv1, model.bn1, model.layer1, model.layer2):
        for p in block.parameters():
            p.require_grad = False


def build_model(n_classes):
    net = models.resnet34(weights=models.ResNet34_Weights.IMAGENET1K_V1)
    net.fc = nn.Linear(net.fc.in_features, n_classes)
    freeze_early_layers(net)
    return net


def accuracy(model, loader, device):
    model.eval()
    hit = tot = 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(1)
            hit += (pred.cpu() == y).sum().item()
            tot += y.numel()
    return hit / tot


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/data/EuroSAT/2750")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    full = EuroSATTiles(args.root)
    n_val = len(full) // 10
    train_idx, val_idx = random_split(range(len(full)), [len(full) - n_val, n_val],
                                      generator=torch.Generator().manual_seed(args.seed))
    train_set = torch.utils.data.Subset(EuroSATTiles(args.root, augment=True), list(train_idx))
    val_set = torch.utils.data.Subset(full, list(val_idx))
    train_dl = DataLoader(train_set, batch_size=args.bs, shuffle=True, num_workers=8, drop_last=True)
    val_dl = DataLoader(val_set, batch_size=256, num_workers=8)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = build_model(len(full.classes)).to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"optimising {sum(p.numel() for p in trainable):,} parameters")
    optimizer = torch.optim.SGD(trainable, lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[12, 17], gamma=0.1)

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        print(f"epoch {epoch + 1}/{args.epochs}  val acc {accuracy(model, val_dl, device):.4f}")

    torch.save(model.state_dict(), "eurosat_resnet34.pt")


if __name__ == "__main__":
    main()
