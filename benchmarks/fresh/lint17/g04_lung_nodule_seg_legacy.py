"""Lung nodule segmentation on 2-D CT slices (LIDC-style crops), from the group's 2018 codebase.

Slices are stored as HU arrays with a nodule mask per slice; the network is a compact
encoder-decoder trained with a weighted BCE + Dice objective.
"""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.utils.data import DataLoader, Dataset

HU_MIN, HU_MAX = -1000.0, 400.0


def window(hu):
    hu = np.clip(hu, HU_MIN, HU_MAX)
    return ((hu - HU_MIN) / (HU_MAX - HU_MIN)).astype(np.float32)


class NoduleSlices(Dataset):
    def __init__(self, root, split, flip=False):
        data = np.load(os.path.join(root, f"{split}_slices.npz"))
        self.slices = data["hu"]
        self.masks = data["mask"]
        self.flip = flip

    def __len__(self):
        return len(self.slices)

    def __getitem__(self, idx):
        image = window(self.slices[idx])
        mask = self.masks[idx] > 0
        if self.flip and random.random() > 0.5:
            image, mask = image[:, ::-1].copy(), mask[:, ::-1].copy()
        image = torch.from_numpy(image).unsqueeze(0)
        mask = torch.FloatTensor(mask).unsqueeze(0)
        return image, mask


class DownUp(nn.Module):
    def __init__(self, ch=24):
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU(True))
        self.down2 = nn.Sequential(nn.Conv2d(ch, 2 * ch, 3, padding=1, bias=False), nn.BatchNorm2d(2 * ch), nn.ReLU(True))
        self.bottom = nn.Sequential(nn.Conv2d(2 * ch, 2 * ch, 3, padding=2, dilation=2, bias=False),
                                    nn.BatchNorm2d(2 * ch), nn.ReLU(True))
        self.up = nn.Sequential(nn.Conv2d(3 * ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU(True))
        self.out = nn.Conv2d(ch, 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.bottom(self.down2(F.max_pool2d(d1, 2)))
        u = F.interpolate(d2, size=d1.shape[-2:], mode="bilinear", align_corners=False)
        return self.out(self.up(torch.cat([u, d1], 1)))


def dice_loss(logits, target, smooth=1.0):
    prob = torch.sigmoid(logits).view(logits.size(0), -1)
    target = target.view(target.size(0), -1)
    inter = (prob * target).sum(1)
    return 1 - ((2 * inter + smooth) / (prob.sum(1) + target.sum(1) + smooth)).mean()


def train(model, loader, optimizer, pos_weight, use_cuda):
    model.train()
    epoch_loss, seen = 0.0, 0
    for images, masks in loader:
        if use_cuda:
            images, masks = images.cuda(), masks.cuda()
        images, masks = Variable(images), Variable(masks)
        logits = model(images)
        loss = F.binary_cross_entropy_with_logits(logits, masks, pos_weight=pos_weight) + dice_loss(logits, masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item() * images.size(0)
        seen += images.size(0)
    return epoch_loss / max(seen, 1)


def validate(model, loader, use_cuda):
    model.eval()
    scores = []
    with torch.no_grad():
        for images, masks in loader:
            if use_cuda:
                images, masks = images.cuda(), masks.cuda()
            pred = (torch.sigmoid(model(images)) > 0.5).float()
            inter = (pred * masks).sum(dim=(1, 2, 3))
            total = pred.sum(dim=(1, 2, 3)) + masks.sum(dim=(1, 2, 3))
            scores.extend(((2 * inter + 1) / (total + 1)).tolist())
    return float(np.mean(scores))


def main(argv=None):
    parser = argparse.ArgumentParser(description="LIDC nodule segmentation")
    parser.add_argument("--root", default="/data/lidc_crops")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=24)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--pos-weight", type=float, default=8.0)
    parser.add_argument("--save", default="checkpoints/nodule_seg.pth")
    parser.add_argument("--seed", type=int, default=2018)
    args = parser.parse_args(argv)

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    use_cuda = torch.cuda.is_available()
    train_loader = DataLoader(NoduleSlices(args.root, "train", flip=True), batch_size=args.batch_size,
                              shuffle=True, drop_last=True)
    valid_loader = DataLoader(NoduleSlices(args.root, "valid"), batch_size=args.batch_size)
    model = DownUp()
    if use_cuda:
        model = model.cuda()
    pos_weight = torch.full((1,), args.pos_weight, device="cuda" if use_cuda else "cpu")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=5)
    best = 0.0
    for epoch in range(args.epochs):
        loss = train(model, train_loader, optimizer, pos_weight, use_cuda)
        dice = validate(model, valid_loader, use_cuda)
        scheduler.step(dice)
        print("epoch %d loss %.4f dice %.4f" % (epoch, loss, dice))
        if dice > best:
            best = dice
            os.makedirs(os.path.dirname(args.save) or ".", exist_ok=True)
            torch.save({"epoch": epoch, "state_dict": model.state_dict(), "dice": dice}, args.save)


if __name__ == "__main__":
    main()
