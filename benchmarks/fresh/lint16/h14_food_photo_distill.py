"""Distil a large food-photo classifier into a mobile-sized student."""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = torch.tensor([0.55, 0.45, 0.35]).view(3, 1, 1)
STD = torch.tensor([0.25, 0.25, 0.26]).view(3, 1, 1)


class FoodImages(Dataset):
    def __init__(self, list_file, root, size=128, train=True):
        with open(list_file) as fh:
            self.items = [line.split() for line in fh if line.strip()]
        self.root, self.size, self.train = root, size, train

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        rel, label = self.items[i]
        img = Image.open(os.path.join(self.root, rel)).convert("RGB").resize((self.size, self.size))
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
        if self.train and torch.rand(()) < 0.5:
            x = x.flip(-1)
        return (x - MEAN) / STD, int(label)


def conv_bn(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU6())


def make_net(widths, num_classes):
    layers, cin = [], 3
    for w in widths:
        layers += [conv_bn(cin, w, 2), conv_bn(w, w, 1)]
        cin = w
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes))


class DistillLoss(nn.Module):
    def __init__(self, temperature, alpha):
        super().__init__()
        self.t = temperature
        self.alpha = alpha
        self.kl = nn.KLDivLoss(reduction="batchmean")

    def soften(self, logits):
        return F.softmax(logits / self.t, dim=1)

    def forward(self, student_logits, teacher_logits, labels):
        hard = F.cross_entropy(student_logits, labels)
        soft = self.kl(self.soften(student_logits), self.soften(teacher_logits)) * self.t ** 2
        return self.alpha * soft + (1 - self.alpha) * hard


@torch.no_grad()
def top1(model, loader, device):
    model.eval()
    hit = n = 0
    for x, y in loader:
        hit += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
        n += y.numel()
    return hit / max(n, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/food101/images")
    ap.add_argument("--train-list", default="data/food101/train.txt")
    ap.add_argument("--val-list", default="data/food101/val.txt")
    ap.add_argument("--teacher", default="checkpoints/food_teacher.pt")
    ap.add_argument("--classes", type=int, default=101)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=96)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--temperature", type=float, default=4.0)
    ap.add_argument("--alpha", type=float, default=0.7)
    ap.add_argument("--out", default="checkpoints/food_student.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(FoodImages(args.train_list, args.root), batch_size=args.batch_size,
                          shuffle=True, drop_last=True, num_workers=0)
    val_dl = DataLoader(FoodImages(args.val_list, args.root, train=False), batch_size=args.batch_size)

    teacher = make_net([64, 128, 256, 512], args.classes).to(device)
    teacher.load_state_dict(torch.load(args.teacher, map_location=device, weights_only=True))
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = make_net([16, 32, 64, 128], args.classes).to(device)

    criterion = DistillLoss(args.temperature, args.alpha)
    optimizer = torch.optim.SGD(student.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    print(f"teacher top-1 {top1(teacher, val_dl, device):.3f}")
    best = 0.0
    for epoch in range(args.epochs):
        student.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            with torch.no_grad():
                t_logits = teacher(x)
            loss = criterion(student(x), t_logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        acc = top1(student, val_dl, device)
        print(f"epoch {epoch}: student top-1 {acc:.3f}")
        if acc > best:
            best = acc
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save(student.state_dict(), args.out)


if __name__ == "__main__":
    main()
