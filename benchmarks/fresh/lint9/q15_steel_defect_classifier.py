"""Severstal steel surface inspection: which of the four defect types appear on a strip image.

A from-scratch CNN with channel and spatial attention gates after each stage (CBAM-style).
Multi-label: one sigmoid output per defect class.
"""
import argparse
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, Dataset

N_DEFECTS = 4
GRAY_MEAN, GRAY_STD = 0.344, 0.165


class SteelDataset(Dataset):
    def __init__(self, image_dir, ids, labels, train):
        self.image_dir, self.ids, self.labels, self.train = image_dir, ids, labels, train

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        img = np.asarray(Image.open(os.path.join(self.image_dir, self.ids[i])).convert("L"), dtype=np.float32)
        x = torch.from_numpy((img / 255.0 - GRAY_MEAN) / GRAY_STD)[None]
        x = F.interpolate(x[None], size=(128, 800), mode="bilinear", align_corners=False)[0]
        if self.train:
            if torch.rand(()) < 0.5:
                x = x.flip(-1)
            if torch.rand(()) < 0.5:
                x = x.flip(-2)
        return x, torch.from_numpy(self.labels[i])


class ChannelGate(nn.Module):
    def __init__(self, c, r=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(c, c // r), nn.ReLU(inplace=True), nn.Linear(c // r, c))

    def forward(self, x):
        w = self.mlp(x.mean((2, 3))) + self.mlp(x.amax((2, 3)))
        return x * torch.sigmoid(w)[:, :, None, None]


class SpatialGate(nn.Module):
    def __init__(self, k=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        pooled = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], dim=1)
        weights = F.softmax(self.bn(self.conv(pooled)), dim=1)
        return x * weights


def stage(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        ChannelGate(c_out), SpatialGate(), nn.MaxPool2d(2),
    )


class DefectNet(nn.Module):
    def __init__(self, n_out):
        super().__init__()
        self.features = nn.Sequential(stage(1, 32), stage(32, 64), stage(64, 128), stage(128, 256))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(256, n_out))

    def forward(self, x):
        return self.head(self.features(x))


def read_labels(csv_path, image_dir):
    df = pd.read_csv(csv_path)
    ids = sorted(os.listdir(image_dir))
    present = df.groupby("ImageId")["ClassId"].apply(set).to_dict()
    labels = np.zeros((len(ids), N_DEFECTS), dtype=np.float32)
    for row, image_id in enumerate(ids):
        for c in present.get(image_id, ()):
            labels[row, c - 1] = 1.0
    return ids, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", default="data/severstal/train_images")
    ap.add_argument("--csv", default="data/severstal/train.csv")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--batch-size", type=int, default=24)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ids, labels = read_labels(args.csv, args.images)
    tr_ids, va_ids, tr_y, va_y = train_test_split(ids, labels, test_size=0.15, random_state=0,
                                                  stratify=labels.any(1))
    train_dl = DataLoader(SteelDataset(args.images, tr_ids, tr_y, True), batch_size=args.batch_size,
                          shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(SteelDataset(args.images, va_ids, va_y, False), batch_size=64, num_workers=4)

    model = DefectNet(N_DEFECTS).to(device)
    pos = torch.tensor(tr_y.mean(0), dtype=torch.float32).clamp(min=1e-3)
    criterion = nn.BCEWithLogitsLoss(pos_weight=((1 - pos) / pos).sqrt().to(device))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                    steps_per_epoch=len(train_dl))

    for epoch in range(args.epochs):
        model.train()
        seen, loss_sum = 0, 0.0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * x.size(0)
            seen += x.size(0)
        model.eval()
        probs = []
        with torch.no_grad():
            for x, _ in val_dl:
                probs.append(torch.sigmoid(model(x.to(device))).cpu())
        pred = (torch.cat(probs).numpy() > 0.5).astype(int)
        f1 = f1_score(va_y.astype(int), pred, average="macro", zero_division=0)
        print(f"epoch {epoch + 1:02d} train loss {loss_sum / seen:.4f} val macro-F1 {f1:.4f}")
    torch.save(model.state_dict(), "steel_defectnet.pt")


if __name__ == "__main__":
    main()
