"""Road extraction from aerial tiles (Massachusetts Roads: 1500 x 1500 tiles, binary masks).

Random 512 px windows are cut from the tiles on the fly; the same window, flip and rotation
go to the tile and to its mask.
"""
import copy
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

ROOT = Path("data/mass_roads")
WINDOW = 512
EPOCHS = 80
BATCH = 8
LR = 1e-3
POS_WEIGHT = 4.0
CHANNEL_MEAN = torch.tensor([0.41, 0.42, 0.37]).view(3, 1, 1)
CHANNEL_STD = torch.tensor([0.20, 0.19, 0.20]).view(3, 1, 1)


class JointGeometry:
    """One random draw per sample, applied identically to every tensor passed in."""

    def __init__(self, window):
        self.window = window

    def __call__(self, *tensors):
        h, w = tensors[0].shape[-2:]
        top, left = random.randint(0, h - self.window), random.randint(0, w - self.window)
        flip, turns = random.random() < 0.5, random.randint(0, 3)
        out = []
        for t in tensors:
            t = t[..., top: top + self.window, left: left + self.window]
            if flip:
                t = t.flip(-1)
            out.append(torch.rot90(t, turns, dims=(-2, -1)))
        return out


class RoadTiles(Dataset):
    def __init__(self, split, windows_per_tile, geometry=None):
        self.tiles = sorted((ROOT / split / "sat").glob("*.tiff"))
        self.masks = [ROOT / split / "map" / (p.stem + ".tif") for p in self.tiles]
        self.windows_per_tile = windows_per_tile
        self.geometry = geometry

    def __len__(self):
        return len(self.tiles) * self.windows_per_tile

    def __getitem__(self, i):
        k = i // self.windows_per_tile
        image = torch.from_numpy(np.asarray(Image.open(self.tiles[k]).convert("RGB"), dtype=np.float32) / 255.0)
        image = (image.permute(2, 0, 1) - CHANNEL_MEAN) / CHANNEL_STD
        mask = torch.from_numpy((np.asarray(Image.open(self.masks[k]).convert("L")) > 127).astype(np.float32))[None]
        if self.geometry is not None:
            image, mask = self.geometry(image, mask)
        else:
            image, mask = image[:, :1472, :1472], mask[:, :1472, :1472]
        return image, mask


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True))


class RoadUNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256, 512)):
        super().__init__()
        self.encoders = nn.ModuleList(block(a, b) for a, b in zip((3,) + widths[:-1], widths))
        self.ups = nn.ModuleList(nn.ConvTranspose2d(b, a, 2, 2) for a, b in zip(widths[:-1], widths[1:]))
        self.decoders = nn.ModuleList(block(2 * a, a) for a in widths[:-1])
        self.classifier = nn.Conv2d(widths[0], 1, 1)

    def forward(self, x):
        skips = []
        for i, enc in enumerate(self.encoders):
            x = enc(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for up, dec in zip(reversed(self.ups), reversed(self.decoders)):
            x = dec(torch.cat([up(x), skips.pop()], dim=1))
        return self.classifier(x)


def soft_dice(logits, mask):
    p = torch.sigmoid(logits)
    return 1 - (2 * (p * mask).sum() + 1) / (p.sum() + mask.sum() + 1)


def relaxed_f1(model, loader, device):
    model.eval()
    tp = fp = fn = 0.0
    with torch.no_grad():
        for image, mask in loader:
            pred = (torch.sigmoid(model(image.to(device))) > 0.5).float()
            mask = mask.to(device)
            tp += (pred * mask).sum().item()
            fp += (pred * (1 - mask)).sum().item()
            fn += ((1 - pred) * mask).sum().item()
    return 2 * tp / max(2 * tp + fp + fn, 1.0)


def main():
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(RoadTiles("train", 16, JointGeometry(WINDOW)), BATCH, shuffle=True,
                              num_workers=8, drop_last=True)
    valid_loader = DataLoader(RoadTiles("valid", 1), 1, num_workers=2)

    model = RoadUNet().to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(POS_WEIGHT, device=device))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS, eta_min=1e-5)

    best_f1, best_state = 0.0, None
    for epoch in range(EPOCHS):
        model.train()
        for image, mask in train_loader:
            image, mask = image.to(device), mask.to(device)
            logits = model(image)
            loss = criterion(logits, mask) + soft_dice(logits, mask)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        f1 = relaxed_f1(model, valid_loader, device)
        print(f"epoch {epoch:02d} valid F1 {f1:.4f}")
        if f1 > best_f1:
            best_f1, best_state = f1, copy.deepcopy(model.state_dict())
    torch.save(best_state, "road_unet_best.pt")


if __name__ == "__main__":
    main()
