"""Retinal vessel segmentation on DRIVE-style fundus photographs with a compact U-Net."""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms.functional as TF
from PIL import Image
from torch.utils.data import DataLoader, Dataset


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--root", type=Path, default=Path("data/drive"))
    p.add_argument("--size", type=int, default=384)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--flip-p", type=float, default=0.5)
    p.add_argument("--max-angle", type=float, default=20.0)
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args()


class FlipRotate:
    def __init__(self, flip_p=0.5, max_angle=15.0):
        self.flip_p = flip_p
        self.max_angle = max_angle

    def __call__(self, img):
        if random.random() < self.flip_p:
            img = TF.hflip(img)
        if random.random() < self.flip_p:
            img = TF.vflip(img)
        angle = random.uniform(-self.max_angle, self.max_angle)
        return TF.rotate(img, angle)


class FundusVessels(Dataset):
    def __init__(self, root, split, size, geometric=None):
        self.images = sorted((root / split / "images").glob("*.tif"))
        self.manual = root / split / "1st_manual"
        self.size = size
        self.geometric = geometric

    def __len__(self):
        return len(self.images)

    def _load_pair(self, path):
        img = Image.open(path).convert("RGB").resize((self.size, self.size), Image.BILINEAR)
        mask = Image.open(self.manual / f"{path.stem.split('_')[0]}_manual1.gif").convert("L")
        return img, mask.resize((self.size, self.size), Image.NEAREST)

    def __getitem__(self, i):
        img, mask = self._load_pair(self.images[i])
        if self.geometric is not None:
            img = self.geometric(img)
            mask = self.geometric(mask)
        x = TF.normalize(TF.to_tensor(img), [0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
        y = (TF.to_tensor(mask) > 0.5).float()
        return x, y


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class SmallUNet(nn.Module):
    def __init__(self, base=32):
        super().__init__()
        self.enc1 = double_conv(3, base)
        self.enc2 = double_conv(base, base * 2)
        self.enc3 = double_conv(base * 2, base * 4)
        self.up2 = nn.ConvTranspose2d(base * 4, base * 2, 2, stride=2)
        self.dec2 = double_conv(base * 4, base * 2)
        self.up1 = nn.ConvTranspose2d(base * 2, base, 2, stride=2)
        self.dec1 = double_conv(base * 2, base)
        self.out = nn.Conv2d(base, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.out(d1)


def soft_dice_loss(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    denom = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return (1 - (2 * inter + eps) / (denom + eps)).mean()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    inter = denom = 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        pred = (model(x) > 0).float()
        inter += (pred * y).sum().item()
        denom += (pred.sum() + y.sum()).item()
    return 2 * inter / max(denom, 1.0)


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    aug = FlipRotate(args.flip_p, args.max_angle)
    train_ds = FundusVessels(args.root, "training", args.size, geometric=aug)
    val_ds = FundusVessels(args.root, "test", args.size)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=2, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=2, num_workers=2)

    model = SmallUNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0], device=device))
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        total, seen = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = bce(logits, y) + soft_dice_loss(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * x.size(0)
            seen += x.size(0)
        dice = evaluate(model, val_dl, device)
        print(f"epoch {epoch:3d}  loss {total / seen:.4f}  val dice {dice:.4f}")
        if dice > best:
            best = dice
            torch.save(model.state_dict(), "unet_vessels_best.pt")


if __name__ == "__main__":
    main()
