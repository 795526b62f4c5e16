"""Melanoma vs. benign lesion classification on ISIC dermoscopy images (trainer class)."""
import os
import random

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedGroupKFold
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


class LesionDataset(Dataset):
    def __init__(self, frame, image_dir, transform):
        self.names = frame["image_name"].tolist()
        self.targets = frame["target"].astype(np.float32).tolist()
        self.image_dir = image_dir
        self.transform = transform

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        img = Image.open(os.path.join(self.image_dir, self.names[i] + ".jpg")).convert("RGB")
        return self.transform(img), torch.tensor(self.targets[i])


def build_transforms(size):
    train = transforms.Compose([
        transforms.RandomResizedCrop(size, scale=(0.7, 1.0)),
        transforms.RandomHorizontalFlip(), transforms.RandomVerticalFlip(),
        transforms.ColorJitter(0.2, 0.2, 0.1, 0.02),
        transforms.ToTensor(), transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    test = transforms.Compose([
        transforms.Resize(int(size * 1.14)), transforms.CenterCrop(size),
        transforms.ToTensor(), transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    return train, test


class LesionNet(nn.Module):
    """ResNet-34 trunk with a one-unit malignancy head."""

    def __init__(self, dropout=0.3):
        super().__init__()
        self.trunk = models.resnet34(weights=models.ResNet34_Weights.IMAGENET1K_V1)
        width = self.trunk.fc.in_features
        self.trunk.fc = nn.Identity()
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(width, 1), nn.Sigmoid())

    def forward(self, x):
        return self.head(self.trunk(x)).squeeze(1)


class Trainer:
    def __init__(self, model, train_loader, val_loader, pos_fraction, lr=1e-4, epochs=15):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.train_loader, self.val_loader = train_loader, val_loader
        self.epochs = epochs
        weight = torch.tensor((1 - pos_fraction) / pos_fraction, device=self.device)
        self.criterion = nn.BCEWithLogitsLoss(pos_weight=weight)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=epochs)
        self.best_auc = 0.0

    def train_one_epoch(self):
        self.model.train()
        running, seen = 0.0, 0
        for images, targets in self.train_loader:
            images, targets = images.to(self.device), targets.to(self.device)
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(images), targets)
            loss.backward()
            self.optimizer.step()
            running += loss.item() * images.size(0)
            seen += images.size(0)
        return running / seen

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        scores, labels = [], []
        for images, targets in self.val_loader:
            scores.append(self.model(images.to(self.device)).cpu())
            labels.append(targets)
        return roc_auc_score(torch.cat(labels).numpy(), torch.cat(scores).numpy())

    def fit(self):
        for epoch in range(self.epochs):
            loss = self.train_one_epoch()
            auc = self.validate()
            self.scheduler.step()
            print(f"epoch {epoch:2d}  train loss {loss:.4f}  val AUC {auc:.4f}")
            if auc > self.best_auc:
                self.best_auc = auc
                torch.save(self.model.state_dict(), "lesionnet_best.pt")


def main():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    frame = pd.read_csv("data/isic/train.csv")
    folds = StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=0)
    train_idx, val_idx = next(folds.split(frame, frame["target"], groups=frame["patient_id"]))
    train_df, val_df = frame.iloc[train_idx], frame.iloc[val_idx]
    train_tf, test_tf = build_transforms(256)
    image_dir = "data/isic/jpeg/train"
    train_loader = DataLoader(LesionDataset(train_df, image_dir, train_tf), batch_size=32, shuffle=True,
                              num_workers=6, drop_last=True)
    val_loader = DataLoader(LesionDataset(val_df, image_dir, test_tf), batch_size=64, num_workers=6)
    trainer = Trainer(LesionNet(), train_loader, val_loader, pos_fraction=float(train_df["target"].mean()))
    trainer.fit()


if __name__ == "__main__":
    main()
