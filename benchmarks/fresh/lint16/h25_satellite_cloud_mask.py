"""Cloud segmentation on 4-band satellite tiles (B, G, R, NIR), split by scene before augmenting."""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BAND_MEAN = torch.tensor([0.12, 0.11, 0.10, 0.25]).view(4, 1, 1)
BAND_STD = torch.tensor([0.08, 0.07, 0.07, 0.12]).view(4, 1, 1)


def scene_split(tile_names, val_frac, seed):
    scenes = sorted({n.split("_tile")[0] for n in tile_names})
    random.Random(seed).shuffle(scenes)
    n_val = max(1, int(len(scenes) * val_frac))
    val_scenes = set(scenes[:n_val])
    train = [n for n in tile_names if n.split("_tile")[0] not in val_scenes]
    val = [n for n in tile_names if n.split("_tile")[0] in val_scenes]
    return train, val


class CloudTiles(Dataset):
    def __init__(self, root, names, augment):
        self.root, self.names, self.augment = root, names, augment

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        name = self.names[i]
        tile = np.load(os.path.join(self.root, "images", name + ".npy")).astype(np.float32) / 10000.0
        mask = np.load(os.path.join(self.root, "masks", name + ".npy")).astype(np.float32)
        img = torch.from_numpy(tile).permute(2, 0, 1)
        target = torch.from_numpy(mask)[None]
        if self.augment:
            k = int(torch.randint(0, 4, ()))
            img, target = torch.rot90(img, k, dims=(1, 2)), torch.rot90(target, k, dims=(1, 2))
            if torch.rand(()) < 0.5:
                img, target = img.flip(-1), target.flip(-1)
        return (img - BAND_MEAN) / BAND_STD, target


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class CloudUNet(nn.Module):
    def __init__(self, base=32):
        super().__init__()
        self.down1, self.down2, self.down3 = double_conv(4, base), double_conv(base, 2 * base), double_conv(2 * base, 4 * base)
        self.up2 = nn.ConvTranspose2d(4 * base, 2 * base, 2, stride=2)
        self.dec2 = double_conv(4 * base, 2 * base)
        self.up1 = nn.ConvTranspose2d(2 * base, base, 2, stride=2)
        self.dec1 = double_conv(2 * base, base)
        self.out = nn.Conv2d(base, 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(F.max_pool2d(d1, 2))
        d3 = self.down3(F.max_pool2d(d2, 2))
        u2 = self.dec2(torch.cat([self.up2(d3), d2], 1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], 1))
        return self.out(u1)


def dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    inter = (p * target).sum(dim=(1, 2, 3))
    return (1 - (2 * inter + eps) / (p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps)).mean()


@torch.no_grad()
def mean_iou(model, loader, device):
    model.eval()
    inter = union = 0.0
    for img, target in loader:
        pred = (model(img.to(device)) > 0).float().cpu()
        inter += (pred * target).sum().item()
        union += ((pred + target) > 0).float().sum().item()
    return inter / max(union, 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/clouds")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="checkpoints/cloud_unet.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    names = sorted(f[:-4] for f in os.listdir(os.path.join(args.root, "images")) if f.endswith(".npy"))
    train_names, val_names = scene_split(names, 0.15, seed=0)
    train_dl = DataLoader(CloudTiles(args.root, train_names, augment=True), batch_size=args.batch_size,
                          shuffle=True, drop_last=True)
    val_dl = DataLoader(CloudTiles(args.root, val_names, augment=False), batch_size=args.batch_size)

    model = CloudUNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for img, target in train_dl:
            img, target = img.to(device), target.to(device)
            optimizer.zero_grad()
            logits = model(img)
            loss = F.binary_cross_entropy_with_logits(logits, target) + dice_loss(logits, target)
            loss.backward()
            optimizer.step()
        iou = mean_iou(model, val_dl, device)
        print(f"epoch {epoch}: val IoU {iou:.3f}")
        if iou > best:
            best = iou
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save({"model": model.state_dict(), "epoch": epoch, "iou": iou}, args.out)


if __name__ == "__main__":
    main()
