"""Pneumonia vs. normal on paediatric chest X-rays (binary), ResNet-18 backbone.

Labels come from a CSV (`path,label`), label 1 = pneumonia. The classes are imbalanced
(about 3:1), so the loss uses a positive-class weight computed on the training split.
"""
import os
from pathlib import Path

import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

ROOT = Path(os.environ.get("CXR_ROOT", "/data/chest_xray"))
EPOCHS = 15
BATCH = 32
LR = 1e-4


class XrayDataset(Dataset):
    def __init__(self, csv_file, train):
        self.items = pd.read_csv(csv_file)
        aug = [transforms.RandomAffine(degrees=7, translate=(0.04, 0.04), scale=(0.95, 1.05))] if train else []
        self.tf = transforms.Compose([
            transforms.Resize((256, 256)),
            *aug,
            transforms.ToTensor(),
            transforms.Normalize([0.482], [0.236]),
        ])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        row = self.items.iloc[idx]
        img = Image.open(ROOT / row["path"]).convert("L")
        return self.tf(img), torch.tensor(row["label"], dtype=torch.float32)


class PneumoniaNet(nn.Module):
    def __init__(self):
        super().__init__()
        backbone = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
        w = backbone.conv1.weight.detach().sum(dim=1, keepdim=True)
        backbone.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
        with torch.no_grad():
            backbone.conv1.weight.copy_(w)
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.classifier = nn.Linear(512, 1)

    def forward(self, x):
        feat = self.backbone(x)
        return torch.sigmoid(self.classifier(feat)).squeeze(1)


def pos_weight_from(csv_file):
    labels = pd.read_csv(csv_file)["label"].to_numpy()
    pos = labels.sum()
    return torch.tensor([(len(labels) - pos) / max(pos, 1)], dtype=torch.float32)


def train_one_epoch(model, loader, criterion, optimizer, device):
    model.train()
    running, count = 0.0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        scores = model(images)
        loss = criterion(scores, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item() * images.size(0)
        count += images.size(0)
    return running / count


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    scores, targets = [], []
    for images, labels in loader:
        scores.append(model(images.to(device)).cpu())
        targets.append(labels)
    scores = torch.cat(scores).numpy()
    targets = torch.cat(targets).numpy()
    acc = float(((scores > 0.5) == targets).mean())
    return roc_auc_score(targets, scores), acc


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_csv, val_csv = ROOT / "train.csv", ROOT / "val.csv"
    train_dl = DataLoader(XrayDataset(train_csv, train=True), batch_size=BATCH, shuffle=True,
                          num_workers=4, drop_last=True)
    val_dl = DataLoader(XrayDataset(val_csv, train=False), batch_size=64, num_workers=4)

    model = PneumoniaNet().to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight_from(train_csv).to(device))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=2)

    best_auc = 0.0
    for epoch in range(EPOCHS):
        loss = train_one_epoch(model, train_dl, criterion, optimizer, device)
        auc, acc = validate(model, val_dl, device)
        scheduler.step(auc)
        print(f"[{epoch + 1:02d}/{EPOCHS}] loss={loss:.4f} val_auc={auc:.4f} val_acc={acc:.3f}")
        if auc > best_auc:
            best_auc = auc
            torch.save(model.state_dict(), "pneumonia_resnet18.pt")
    print(f"best val AUC {best_auc:.4f}")
