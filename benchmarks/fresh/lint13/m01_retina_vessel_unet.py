"""Retinal vessel segmentation on DRIVE-style fundus images with a small U-Net.

Trains on random 96x96 patches inside the field-of-view mask and evaluates on whole images.
Usage: python m01_retina_vessel_unet.py --data data/DRIVE --epochs 60
"""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", type=Path, default=Path("data/DRIVE"))
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--patch", type=int, default=96)
    p.add_argument("--patches-per-image", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--base", type=int, default=32)
    p.add_argument("--logdir", type=Path, default=Path("runs/drive_unet"))
    p.add_argument("--seed", type=int, default=13)
    return p.parse_args()


def load_green(path):
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=np.float32) / 255.0
    g = rgb[..., 1]
    return (g - g.mean()) / (g.std() + 1e-6)


class FundusPatches(Dataset):
    def __init__(self, root, patch, per_image):
        self.images = sorted((root / "images").glob("*.tif"))
        self.patch, self.per_image = patch, per_image
        self.cache = []
        for img_path in self.images:
            stem = img_path.stem.split("_")[0]
            vessel = np.asarray(Image.open(root / "1st_manual" / f"{stem}_manual1.gif")) > 0
            fov = np.asarray(Image.open(root / "mask" / f"{stem}_training_mask.gif")) > 0
            self.cache.append((load_green(img_path), vessel.astype(np.float32), fov))

    def __len__(self):
        return len(self.cache) * self.per_image

    def __getitem__(self, idx):
        green, vessel, fov = self.cache[idx // self.per_image]
        h, w = green.shape
        while True:
            top, left = random.randrange(h - self.patch), random.randrange(w - self.patch)
            if fov[top + self.patch // 2, left + self.patch // 2]:
                break
        sl = (slice(top, top + self.patch), slice(left, left + self.patch))
        x = torch.from_numpy(green[sl].copy()).unsqueeze(0)
        y = torch.from_numpy(vessel[sl].copy()).unsqueeze(0)
        if random.random() < 0.5:
            x, y = x.flip(-1), y.flip(-1)
        return x, y


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    def __init__(self, base=32):
        super().__init__()
        self.enc1, self.enc2 = conv_block(1, base), conv_block(base, base * 2)
        self.enc3 = conv_block(base * 2, base * 4)
        self.up2 = nn.ConvTranspose2d(base * 4, base * 2, 2, stride=2)
        self.dec2 = conv_block(base * 4, base * 2)
        self.up1 = nn.ConvTranspose2d(base * 2, base, 2, stride=2)
        self.dec1 = conv_block(base * 2, base)
        self.out = nn.Conv2d(base, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1)


def dice_loss(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum((1, 2, 3))
    return 1 - ((2 * inter + eps) / (prob.sum((1, 2, 3)) + target.sum((1, 2, 3)) + eps)).mean()


class RunLogger:
    def __init__(self, logdir):
        self.writer = SummaryWriter(log_dir=str(logdir))
        self.history = []

    def log(self, step, **scalars):
        for name, value in scalars.items():
            self.writer.add_scalar(name, value, step)
        self.history.append({"step": step, **scalars})


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    tp = fp = fn = 0.0
    for x, y in loader:
        pred = (model(x.to(device)) > 0).float()
        y = y.to(device)
        tp += (pred * y).sum().item()
        fp += (pred * (1 - y)).sum().item()
        fn += ((1 - pred) * y).sum().item()
    return 2 * tp / max(2 * tp + fp + fn, 1.0)


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = FundusPatches(args.data / "training", args.patch, args.patches_per_image)
    val_set = FundusPatches(args.data / "validation", args.patch, 50)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, num_workers=2)
    model = UNet(args.base).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    logger = RunLogger(args.logdir)
    best, step = 0.0, 0
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.binary_cross_entropy_with_logits(logits, y) + dice_loss(logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            if step % 50 == 0:
                logger.log(step, train_loss=loss.item(), lr=scheduler.get_last_lr()[0])
        scheduler.step()
        f1 = evaluate(model, val_loader, device)
        logger.log(step, val_f1=f1)
        print(f"epoch {epoch:3d}  val F1 {f1:.4f}")
        if f1 > best:
            best = f1
            torch.save(model.state_dict(), args.logdir / "best.pt")


if __name__ == "__main__":
    main()
