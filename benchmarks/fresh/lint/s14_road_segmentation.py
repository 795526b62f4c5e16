"""Binary road segmentation on aerial tiles: training loop with validation and best-model tracking."""
import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class TileDataset(Dataset):
    def __init__(self, root):
        self.images = sorted(glob.glob(os.path.join(root, "images", "*.png")))
        self.masks = [p.replace("images", "masks") for p in self.images]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = np.asarray(Image.open(self.images[i]).convert("RGB"), dtype=np.float32) / 255.0
        mask = np.asarray(Image.open(self.masks[i]), dtype=np.float32) / 255.0
        return torch.from_numpy(img).permute(2, 0, 1), torch.from_numpy(mask)[None]


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.Dropout2d(0.2),
        )
        self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False), nn.Conv2d(64, 1, 3, padding=1))

    def forward(self, x):
        return self.up(self.down(x))


def dice_score(logits, target, eps=1e-6):
    pred = (torch.sigmoid(logits) > 0.5).float()
    inter = (pred * target).sum(dim=(1, 2, 3))
    union = pred.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return ((2 * inter + eps) / (union + eps)).mean().item()


def validate(model, loader, device):
    model.eval()
    scores = []
    with torch.no_grad():
        for img, mask in loader:
            scores.append(dice_score(model(img.to(device)), mask.to(device)))
    return float(np.mean(scores))


def train(epochs=40, device="cuda" if torch.cuda.is_available() else "cpu"):
    train_dl = DataLoader(TileDataset("data/train"), batch_size=16, shuffle=True, num_workers=4)
    val_dl = DataLoader(TileDataset("data/val"), batch_size=16, num_workers=4)
    model = SegNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    best_dice, best_weights = 0.0, None

    model.train()
    for epoch in range(epochs):
        for img, mask in train_dl:
            img, mask = img.to(device), mask.to(device)
            opt.zero_grad()
            loss = F.binary_cross_entropy_with_logits(model(img), mask)
            loss.backward()
            opt.step()
        dice = validate(model, val_dl, device)
        print(f"epoch {epoch}: loss {loss.item():.4f} val dice {dice:.4f}")
        if dice > best_dice:
            best_dice = dice
            best_weights = model.state_dict()

    model.load_state_dict(best_weights)
    torch.save(model.state_dict(), "segnet_best.pt")
    print(f"best val dice {best_dice:.4f}")


if __name__ == "__main__":
    train()
