"""Distil a large hand-keypoint heatmap model (HRNet-w48 export) into a mobile student.

Student loss = ground-truth heatmap MSE + alpha * MSE to the teacher heatmaps.
21 keypoints, 256x256 crops, heatmaps at 64x64.
"""
import argparse
import json
import os

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

N_KPT = 21
HM = 64


def gaussian_heatmaps(kpts, size=HM, sigma=2.0):
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    maps = np.zeros((len(kpts), size, size), np.float32)
    for k, (x, y, v) in enumerate(kpts):
        if v > 0:
            maps[k] = np.exp(-((xs - x) ** 2 + (ys - y) ** 2) / (2 * sigma**2))
    return maps


class HandCrops(Dataset):
    def __init__(self, ann_file, img_dir):
        with open(ann_file) as f:
            self.items = json.load(f)
        self.img_dir = img_dir

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        it = self.items[i]
        img = cv2.imread(os.path.join(self.img_dir, it["file"]))[:, :, ::-1]
        img = cv2.resize(img, (256, 256)).astype(np.float32) / 255.0
        img = (img - 0.45) / 0.25
        kpts = [(x * HM / 256, y * HM / 256, v) for x, y, v in it["keypoints"]]
        return torch.from_numpy(img.transpose(2, 0, 1).copy()), torch.from_numpy(gaussian_heatmaps(kpts))


def dw_block(c_in, c_out, stride=1):
    return nn.Sequential(
        nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False), nn.BatchNorm2d(c_in), nn.ReLU6(inplace=True),
        nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU6(inplace=True),
    )


class StudentNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6(inplace=True))
        self.body = nn.Sequential(dw_block(32, 64, 2), dw_block(64, 96), dw_block(96, 128), dw_block(128, 128))
        self.head = nn.Conv2d(128, N_KPT, 1)

    def forward(self, x):
        return self.head(self.body(self.stem(x)))


class Distiller(nn.Module):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def forward(self, x):
        return self.student(x), self.teacher(x)


def distill_loss(student_hm, teacher_hm, gt_hm, alpha):
    return F.mse_loss(student_hm, gt_hm) + alpha * F.mse_loss(student_hm, teacher_hm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher", default="weights/hrnet_w48_hand.ts")
    ap.add_argument("--ann", default="data/freihand/train.json")
    ap.add_argument("--images", default="data/freihand/rgb")
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    teacher = torch.jit.load(args.teacher, map_location=device)
    teacher.eval()
    distiller = Distiller(StudentNet(), teacher).to(device)
    distiller.student.train()

    loader = DataLoader(HandCrops(args.ann, args.images), batch_size=64, shuffle=True,
                        num_workers=8, drop_last=True)
    optimizer = torch.optim.Adam(distiller.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        running, n = 0.0, 0
        for img, gt in loader:
            img, gt = img.to(device), gt.to(device)
            student_hm, teacher_hm = distiller(img)
            loss = distill_loss(student_hm, teacher_hm, gt, args.alpha)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * img.size(0)
            n += img.size(0)
        print(f"epoch {epoch + 1}: loss {running / n:.5f}")
        torch.save(distiller.student.state_dict(), "hand_student.pt")


if __name__ == "__main__":
    main()
