import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class CrackTiles(Dataset):
    def __init__(self, root, crop=None):
        self.images = sorted((Path(root) / "images").glob("*.png"))
        self.masks = [Path(root) / "masks" / p.name for p in self.images]
        self.crop = crop

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = torch.from_numpy(np.array(Image.open(self.images[i]).convert("L"), dtype=np.float32) / 255.0)[None]
        mask = torch.from_numpy((np.array(Image.open(self.masks[i])) > 127).astype(np.int64))
        if self.crop:
            h, w = mask.shape
            top = int(torch.randint(0, h - self.crop + 1, ()))
            left = int(torch.randint(0, w - self.crop + 1, ()))
            img = img[:, top : top + self.crop, left : left + self.crop]
            mask = mask[top : top + self.crop, left : left + self.crop]
            if torch.rand(()) < 0.5:
                img, mask = img.flip(-1), mask.flip(-1)
        return (img - 0.5) / 0.25, mask


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class TinyUNet(nn.Module):
    def __init__(self, base=16, n_classes=2):
        super().__init__()
        self.enc1, self.enc2, self.mid = double_conv(1, base), double_conv(base, 2 * base), double_conv(2 * base, 4 * base)
        self.dec2, self.dec1 = double_conv(6 * base, 2 * base), double_conv(3 * base, base)
        self.out = nn.Conv2d(base, n_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(m, size=e2.shape[-2:], mode="nearest"), e2], dim=1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, size=e1.shape[-2:], mode="nearest"), e1], dim=1))
        return self.out(d1)


def crack_iou(model, loader, device):
    model.eval()
    inter = union = 0
    with torch.no_grad():
        for img, mask in loader:
            img, mask = img.to(device), mask.to(device)
            logits = model(img)
            pred = logits.argmax(0)
            inter += ((pred == 1) & (mask == 1)).sum().item()
            union += ((pred == 1) | (mask == 1)).sum().item()
    return inter / max(union, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="crack500")
    parser.add_argument("--crop", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--crack-weight", type=float, default=8.0)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(CrackTiles(Path(args.root) / "train", crop=args.crop), batch_size=8, shuffle=True, num_workers=4)
    val_loader = DataLoader(CrackTiles(Path(args.root) / "val"), batch_size=1)
    model = TinyUNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    class_weight = torch.tensor([1.0, args.crack_weight], device=device)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for img, mask in train_loader:
            img, mask = img.to(device), mask.to(device)
            loss = F.cross_entropy(model(img), mask, weight=class_weight)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        iou = crack_iou(model, val_loader, device)
        print(f"epoch {epoch}: crack IoU {iou:.3f}")
        if iou > best:
            best = iou
            torch.save(model.state_dict(), "crack_unet.pt")


if __name__ == "__main__":
    main()
