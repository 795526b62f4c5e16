"""Chronic wound segmentation on smartphone photographs (FUSeg-style folders:
<split>/images/*.png and <split>/labels/*.png, binary masks with 255 = wound)."""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-root", type=Path, default=Path("data/fuseg"))
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=12)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--flip-prob", type=float, default=0.5)
    p.add_argument("--out", type=Path, default=Path("runs/wound_unet.pt"))
    p.add_argument("--seed", type=int, default=17)
    return p.parse_args()


class RandomMirror:
    """Horizontal and vertical mirroring of a CHW tensor."""

    def __init__(self, p):
        self.p = p

    def __call__(self, t):
        if random.random() < self.p:
            t = t.flip(-1)
        if random.random() < self.p:
            t = t.flip(-2)
        return t


class WoundPhotos(Dataset):
    def __init__(self, root, size, augment=None):
        self.images = sorted((root / "images").glob("*.png"))
        self.labels = [root / "labels" / p.name for p in self.images]
        self.size = size
        self.augment = augment

    def __len__(self):
        return len(self.images)

    def _load(self, path, mode, resample):
        im = Image.open(path).convert(mode).resize((self.size, self.size), resample)
        return torch.from_numpy(np.array(im, dtype=np.float32) / 255.0)

    def __getitem__(self, i):
        image = self._load(self.images[i], "RGB", Image.BILINEAR).permute(2, 0, 1)
        mask = (self._load(self.labels[i], "L", Image.NEAREST) > 0.5).float().unsqueeze(0)
        if self.augment is not None:
            image = self.augment(image)
            mask = self.augment(mask)
        return (image - MEAN) / STD, mask


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class SmallUNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256)):
        super().__init__()
        self.down = nn.ModuleList()
        cin = 3
        for w in widths:
            self.down.append(double_conv(cin, w))
            cin = w
        self.up = nn.ModuleList()
        self.fuse = nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(nn.ConvTranspose2d(cin, w, 2, stride=2))
            self.fuse.append(double_conv(2 * w, w))
            cin = w
        self.out = nn.Conv2d(cin, 1, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            x = block(x)
            if i < len(self.down) - 1:
                skips.append(x)
                x = F.max_pool2d(x, 2)
        for up, fuse in zip(self.up, self.fuse):
            x = fuse(torch.cat([up(x), skips.pop()], dim=1))
        return self.out(x)


def dice_from_logits(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    union = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return ((2 * inter + eps) / (union + eps)).mean()


def run_epoch(model, loader, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total_dice, seen = 0.0, 0
    with torch.set_grad_enabled(training):
        for image, mask in loader:
            image, mask = image.to(device), mask.to(device)
            logits = model(image)
            loss = F.binary_cross_entropy_with_logits(logits, mask) + 1 - dice_from_logits(logits, mask)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total_dice += dice_from_logits(logits.detach(), mask).item() * image.size(0)
            seen += image.size(0)
    return total_dice / seen


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_set = WoundPhotos(args.data_root / "train", args.size, augment=RandomMirror(args.flip_prob))
    valid_set = WoundPhotos(args.data_root / "valid", args.size)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, num_workers=4)

    model = SmallUNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best = 0.0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for epoch in range(args.epochs):
        train_dice = run_epoch(model, train_loader, device, optimizer)
        valid_dice = run_epoch(model, valid_loader, device)
        scheduler.step()
        print(f"epoch {epoch:03d} train dice {train_dice:.4f} valid dice {valid_dice:.4f}")
        if valid_dice > best:
            best = valid_dice
            torch.save({"model": model.state_dict(), "epoch": epoch, "dice": best}, args.out)
    print(f"best validation dice {best:.4f}")


if __name__ == "__main__":
    main()
