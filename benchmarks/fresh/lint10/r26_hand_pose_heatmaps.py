"""21-keypoint hand pose from 224 px crops (FreiHAND-style annotations), heatmap regression.

annotations.json: [{"file": ..., "keypoints": [[x, y, visible], ...21]}, ...] in crop pixels.
"""
import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

N_KP, IMG, HM = 21, 224, 56


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=Path("data/hands"))
    ap.add_argument("--epochs", type=int, default=90)
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--sigma", type=float, default=2.0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return ap.parse_args()


class HandCrops(Dataset):
    def __init__(self, root, split, sigma, train):
        self.items = json.loads((root / f"{split}_annotations.json").read_text())
        self.root, self.sigma, self.train = root / split, sigma, train
        grid = torch.arange(HM, dtype=torch.float32)
        self.yy, self.xx = torch.meshgrid(grid, grid, indexing="ij")

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        item = self.items[i]
        img = np.asarray(Image.open(self.root / item["file"]).convert("RGB"), dtype=np.float32) / 255.0
        image = torch.from_numpy(img).permute(2, 0, 1)
        kp = torch.tensor(item["keypoints"], dtype=torch.float32)
        if self.train and random.random() < 0.5:
            image = image.flip(-1)
            kp[:, 0] = IMG - 1 - kp[:, 0]
        image = (image - 0.5) / 0.25
        centres = kp[:, :2] * (HM / IMG)
        d2 = (self.xx - centres[:, 0, None, None]) ** 2 + (self.yy - centres[:, 1, None, None]) ** 2
        heatmaps = torch.exp(-d2 / (2 * self.sigma ** 2))
        return {"image": image, "heatmaps": heatmaps, "visible": kp[:, 2], "keypoints": kp[:, :2]}


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True))


class SimpleBaseline(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(conv_bn(3, 32, 2), conv_bn(32, 64, 2), conv_bn(64, 128, 2),
                                  conv_bn(128, 256, 2), conv_bn(256, 256, 2))
        self.up = nn.Sequential(
            nn.ConvTranspose2d(256, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU(True),
            nn.ConvTranspose2d(128, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU(True),
            nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True))
        self.head = nn.Conv2d(64, N_KP, 1)

    def forward(self, x):
        return self.head(self.up(self.down(x)))


def move_batch(batch, device):
    for value in batch.values():
        value.to(device, non_blocking=True)
    return batch


def heatmap_loss(pred, target, visible):
    per_joint = F.mse_loss(pred, target, reduction="none").mean(dim=(2, 3))
    return (per_joint * visible).sum() / visible.sum().clamp(min=1)


def pck(pred, keypoints, visible, threshold=0.2):
    flat = pred.flatten(2).argmax(dim=2)
    coords = torch.stack([flat % HM, flat // HM], dim=2).float() * (IMG / HM)
    box = (keypoints.amax(dim=1) - keypoints.amin(dim=1)).amax(dim=1, keepdim=True)
    hit = ((coords - keypoints).norm(dim=2) <= threshold * box).float()
    return ((hit * visible).sum() / visible.sum().clamp(min=1)).item()


def main():
    args = get_args()
    random.seed(0)
    torch.manual_seed(0)
    train = DataLoader(HandCrops(args.root, "train", args.sigma, True), args.batch, shuffle=True,
                       num_workers=8, drop_last=True, pin_memory=True)
    valid = DataLoader(HandCrops(args.root, "valid", args.sigma, False), 128, num_workers=8, pin_memory=True)
    model = SimpleBaseline().to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[60, 80], gamma=0.1)

    for epoch in range(args.epochs):
        model.train()
        for batch in train:
            batch = move_batch(batch, args.device)
            loss = heatmap_loss(model(batch["image"]), batch["heatmaps"], batch["visible"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()

        model.eval()
        scores, weights = [], []
        with torch.no_grad():
            for batch in valid:
                batch = move_batch(batch, args.device)
                scores.append(pck(model(batch["image"]), batch["keypoints"], batch["visible"]))
                weights.append(batch["visible"].sum().item())
        print(f"epoch {epoch:02d} PCK@0.2 {np.average(scores, weights=weights):.4f}")
    torch.save(model.state_dict(), "hand_pose_baseline.pt")


if __name__ == "__main__":
    main()
