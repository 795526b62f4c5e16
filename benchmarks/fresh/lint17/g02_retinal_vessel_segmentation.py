"""Retinal vessel segmentation on fundus photographs (DRIVE-style patches) with a small U-Net."""
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    data: str = "data/drive_patches.npz"
    out_dir: str = "runs/vessels"
    epochs: int = 30
    batch_size: int = 16
    lr: float = 3e-4
    base_channels: int = 16
    fov_size: int = 56
    seed: int = 11
    mean: list = field(default_factory=lambda: [0.497, 0.273, 0.162])
    std: list = field(default_factory=lambda: [0.330, 0.181, 0.103])


class FundusPatches(Dataset):
    def __init__(self, images, vessels, cfg, augment):
        self.images = images
        self.vessels = vessels
        self.mean = torch.tensor(cfg.mean).view(3, 1, 1)
        self.std = torch.tensor(cfg.std).view(3, 1, 1)
        self.augment = augment

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        image = torch.from_numpy(self.images[i]).permute(2, 0, 1).float() / 255.0
        vessel = torch.from_numpy(self.vessels[i] > 127).unsqueeze(0).to(torch.uint8)
        if self.augment and random.random() < 0.5:
            image, vessel = image.flip(-1), vessel.flip(-1)
        image = (image - self.mean) / self.std
        return {"image": image, "vessel": vessel}


def conv_block(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.enc1, self.enc2, self.enc3 = conv_block(3, c), conv_block(c, 2 * c), conv_block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = conv_block(4 * c, 2 * c)
        self.up1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec1 = conv_block(2 * c, c)
        self.head = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


def center_crop(t, size):
    idx = [slice(None)] * t.dim()
    for axis in (-2, -1):
        start = (t.shape[axis] - size) // 2
        idx[axis] = slice(start, start + size)
    return t[idx]


def soft_dice(logits, target, eps=1.0):
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    union = prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1.0 - ((2 * inter + eps) / (union + eps)).mean()


class Trainer:
    def __init__(self, model, cfg, device):
        self.model = model.to(device)
        self.cfg = cfg
        self.device = device
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)

    def _prepare(self, batch):
        image, vessel = batch["image"], batch["vessel"]
        image = image.to(self.device, non_blocking=True)
        vessel.to(self.device, dtype=torch.float32, non_blocking=True)
        return image, vessel

    def train_epoch(self, loader):
        self.model.train()
        running, seen = 0.0, 0
        for batch in loader:
            image, vessel = self._prepare(batch)
            logits = self.model(image)
            loss = F.binary_cross_entropy_with_logits(logits, vessel) + soft_dice(logits, vessel)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            running += loss.item() * image.size(0)
            seen += image.size(0)
        return running / max(seen, 1)

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        tp = fp = fn = 0.0
        for batch in loader:
            image = batch["image"].to(self.device)
            vessel = batch["vessel"].to(self.device).float()
            pred = (torch.sigmoid(self.model(image)) > 0.5).float()
            pred, vessel = center_crop(pred, self.cfg.fov_size), center_crop(vessel, self.cfg.fov_size)
            tp += (pred * vessel).sum().item()
            fp += (pred * (1 - vessel)).sum().item()
            fn += ((1 - pred) * vessel).sum().item()
        return 2 * tp / max(2 * tp + fp + fn, 1.0)


def main(cfg=Config()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    arrays = np.load(cfg.data)
    train_set = FundusPatches(arrays["train_images"], arrays["train_vessels"], cfg, augment=True)
    valid_set = FundusPatches(arrays["valid_images"], arrays["valid_vessels"], cfg, augment=False)
    train_dl = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True, drop_last=True)
    valid_dl = DataLoader(valid_set, batch_size=cfg.batch_size)

    trainer = Trainer(UNet(cfg.base_channels), cfg, device)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    best_dice = 0.0
    for epoch in range(cfg.epochs):
        loss = trainer.train_epoch(train_dl)
        dice = trainer.evaluate(valid_dl)
        print(f"epoch {epoch:02d} loss {loss:.4f} valid dice {dice:.4f}")
        if dice > best_dice:
            best_dice = dice
            torch.save(trainer.model.state_dict(), out / "unet_best.pt")


if __name__ == "__main__":
    main()
