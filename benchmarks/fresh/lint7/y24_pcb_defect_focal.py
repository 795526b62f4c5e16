"""PCB inspection: multi-label defect tagging of 128x128 AOI patches (6 defect types).

Defects are rare (about 1 patch in 60 has any), so the head uses sigmoid focal loss and the
RetinaNet prior initialisation of the classifier bias.
"""
import argparse
import math

import cv2
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import average_precision_score
from torch.utils.data import DataLoader, Dataset

DEFECTS = ["open", "short", "mousebite", "spur", "copper", "pinhole"]


class AOIPatches(Dataset):
    def __init__(self, csv_path, train):
        self.df = pd.read_csv(csv_path)
        self.train = train

    def __len__(self):
        return len(self.df)

    def __getitem__(self, i):
        row = self.df.iloc[i]
        img = cv2.imread(row["patch"], cv2.IMREAD_GRAYSCALE).astype(np.float32) / 255.0
        x = torch.from_numpy(img)[None]
        if self.train:
            x = torch.rot90(x, int(torch.randint(0, 4, ())), dims=(1, 2))
            if torch.rand(()) < 0.5:
                x = x.flip(2)
        y = torch.tensor([float(row[d]) for d in DEFECTS])
        return (x - 0.5) / 0.2, y


class PatchNet(nn.Module):
    def __init__(self, n_out=len(DEFECTS)):
        super().__init__()

        def block(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(inplace=True),
                                 nn.Conv2d(b, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(inplace=True),
                                 nn.MaxPool2d(2))

        self.features = nn.Sequential(block(1, 32), block(32, 64), block(64, 128), block(128, 256))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(256, n_out)

    def forward(self, x):
        return self.head(self.pool(self.features(x)).flatten(1))


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * targets + (1 - p) * (1 - targets)
    a_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (a_t * (1 - p_t) ** gamma * ce).sum() / targets.sum().clamp(min=1.0)


def set_prior_bias(linear, prior):
    value = -math.log((1 - prior) / prior)
    linear.bias = nn.Parameter(torch.full_like(linear.bias, value))


@torch.no_grad()
def mean_ap(model, loader, device):
    model.eval()
    scores, labels = [], []
    for x, y in loader:
        scores.append(torch.sigmoid(model(x.to(device))).cpu())
        labels.append(y)
    s, t = torch.cat(scores).numpy(), torch.cat(labels).numpy()
    return float(np.mean([average_precision_score(t[:, k], s[:, k]) for k in range(t.shape[1]) if t[:, k].any()]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-csv", default="data/aoi/train.csv")
    ap.add_argument("--val-csv", default="data/aoi/val.csv")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--prior", type=float, default=0.01)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(AOIPatches(args.train_csv, True), batch_size=128, shuffle=True, num_workers=6, drop_last=True)
    val_dl = DataLoader(AOIPatches(args.val_csv, False), batch_size=256, num_workers=6)

    model = PatchNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    set_prior_bias(model.head, args.prior)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.3)

    for epoch in range(args.epochs):
        model.train()
        total, n = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = sigmoid_focal_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * x.size(0)
            n += x.size(0)
        scheduler.step()
        print(f"epoch {epoch + 1}: focal {total / n:.4f}  val mAP {mean_ap(model, val_dl, device):.4f}")
    torch.save(model.state_dict(), "pcb_patchnet.pt")


if __name__ == "__main__":
    main()
