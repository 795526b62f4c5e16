"""Linear probe for knee osteoarthritis severity (Kellgren-Lawrence grade 0-4) on radiographs.

A frozen ImageNet ResNet-18 gives 512-d features; only a linear layer on top is trained.
metadata.csv columns: path, patient_id, side, kl_grade
"""
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import GroupShuffleSplit
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

ROOT = os.environ.get("KNEE_ROOT", "/data/knee_oa")
N_GRADES = 5
EPOCHS = 15
BATCH = 64
LR = 1e-3
SEED = 7


class KneeDataset(Dataset):
    def __init__(self, frame, transform):
        self.paths = frame["path"].tolist()
        self.grades = frame["kl_grade"].astype(int).tolist()
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = Image.open(os.path.join(ROOT, self.paths[i])).convert("RGB")
        return self.transform(img), self.grades[i]


def split_by_patient(frame, seed):
    gss = GroupShuffleSplit(n_splits=1, test_size=0.2, random_state=seed)
    train_idx, val_idx = next(gss.split(frame, groups=frame["patient_id"]))
    return frame.iloc[train_idx].reset_index(drop=True), frame.iloc[val_idx].reset_index(drop=True)


def make_transforms():
    norm = transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    train_tf = transforms.Compose([transforms.Resize((256, 256)), transforms.RandomCrop(224),
                                   transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm])
    val_tf = transforms.Compose([transforms.Resize((256, 256)), transforms.CenterCrop(224),
                                 transforms.ToTensor(), norm])
    return train_tf, val_tf


class LinearProbe(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        backbone = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
        backbone.fc = nn.Identity()
        backbone.requires_grad_(False)
        self.backbone = backbone
        self.head = nn.Linear(512, n_classes)

    def train(self, mode=True):
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x):
        return self.head(self.backbone(x))


def class_weights(grades):
    counts = np.bincount(grades, minlength=N_GRADES).astype(np.float64)
    w = counts.sum() / (N_GRADES * np.maximum(counts, 1.0))
    return torch.tensor(w, dtype=torch.float32)


def run_epoch(model, loader, device, weights, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, n, preds, targets = 0.0, 0, [], []
    with torch.set_grad_enabled(training):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y, weight=weights)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item() * y.size(0)
            n += y.size(0)
            preds.append(logits.argmax(1).cpu())
            targets.append(y.cpu())
    kappa = cohen_kappa_score(torch.cat(targets), torch.cat(preds), weights="quadratic")
    return total / n, kappa


def main():
    torch.manual_seed(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    frame = pd.read_csv(os.path.join(ROOT, "metadata.csv"))
    train_df, val_df = split_by_patient(frame, SEED)
    train_tf, val_tf = make_transforms()
    train_dl = DataLoader(KneeDataset(train_df, train_tf), batch_size=BATCH, shuffle=True, num_workers=4)
    val_dl = DataLoader(KneeDataset(val_df, val_tf), batch_size=BATCH, num_workers=4)

    model = LinearProbe(N_GRADES).to(device)
    weights = class_weights(train_df["kl_grade"].to_numpy()).to(device)
    optimizer = torch.optim.Adam(model.head.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.3)

    best = -1.0
    for epoch in range(EPOCHS):
        tr_loss, tr_kappa = run_epoch(model, train_dl, device, weights, optimizer)
        va_loss, va_kappa = run_epoch(model, val_dl, device, weights)
        scheduler.step()
        print(f"[{epoch + 1:02d}] train {tr_loss:.3f}/{tr_kappa:.3f}  val {va_loss:.3f}/{va_kappa:.3f}")
        if va_kappa > best:
            best = va_kappa
            torch.save(model.head.state_dict(), "knee_probe_head.pt")
    print(f"best quadratic kappa {best:.3f}")


if __name__ == "__main__":
    main()
