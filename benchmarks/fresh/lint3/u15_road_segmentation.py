"""Road extraction from aerial tiles (DeepGlobe): U-Net with a ResNet-18 encoder, Dice + BCE loss."""

import argparse
import glob
import logging
import os
import random

import cv2
import numpy as np
import segmentation_models_pytorch as smp
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("roads")
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class RoadTiles(Dataset):
    def __init__(self, files, size=512, train=True):
        self.files, self.size, self.train = files, size, train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = cv2.cvtColor(cv2.imread(self.files[i]), cv2.COLOR_BGR2RGB)
        mask = cv2.imread(self.files[i].replace("_sat.jpg", "_mask.png"), cv2.IMREAD_GRAYSCALE)
        img = cv2.resize(img, (self.size, self.size), interpolation=cv2.INTER_AREA)
        mask = cv2.resize(mask, (self.size, self.size), interpolation=cv2.INTER_NEAREST)
        if self.train:
            if random.random() < 0.5:
                img, mask = img[:, ::-1], mask[:, ::-1]
            k = random.randint(0, 3)
            img, mask = np.rot90(img, k), np.rot90(mask, k)
        img = (img.astype(np.float32) / 255.0 - MEAN) / STD
        h, w, _ = img.shape
        x = torch.from_numpy(np.ascontiguousarray(img)).reshape(3, h, w)
        y = torch.from_numpy((mask > 127).astype(np.float32)).unsqueeze(0)
        return x, y


def dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    inter = (p * target).sum(dim=(1, 2, 3))
    union = p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return (1 - (2 * inter + eps) / (union + eps)).mean()


def iou(logits, target):
    pred = logits > 0
    t = target > 0.5
    return ((pred & t).sum() / (pred | t).sum().clamp(min=1)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/deepglobe/train")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--bs", type=int, default=8)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    files = sorted(glob.glob(os.path.join(args.root, "*_sat.jpg")))
    random.Random(0).shuffle(files)
    n_val = len(files) // 10
    train_dl = DataLoader(RoadTiles(files[n_val:]), args.bs, shuffle=True, num_workers=6, drop_last=True)
    val_dl = DataLoader(RoadTiles(files[:n_val], train=False), args.bs, num_workers=6)

    model = smp.Unet("resnet18", encoder_weights="imagenet", classes=1).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps_per_epoch = len(train_dl) // args.accum
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, args.lr, total_steps=args.epochs * steps_per_epoch)

    optimizer.zero_grad()
    for epoch in range(args.epochs):
        model.train()
        for step, (x, y) in enumerate(train_dl):
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.binary_cross_entropy_with_logits(logits, y) + dice_loss(logits, y)
            (loss / args.accum).backward()
            if (step + 1) % args.accum == 0:
                optimizer.step()
                scheduler.step()
            if step % 100 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())
        model.eval()
        scores = []
        with torch.no_grad():
            for x, y in val_dl:
                scores.append(iou(model(x.to(device)), y.to(device)))
        log.info("epoch %d val IoU %.4f", epoch, float(np.mean(scores)))
        torch.save(model.state_dict(), f"unet_roads_{epoch:02d}.pt")


if __name__ == "__main__":
    main()
