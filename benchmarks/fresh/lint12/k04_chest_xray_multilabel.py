"""DenseNet-121 on NIH ChestX-ray14: 14 findings per image, split by patient, resumable."""
import argparse
import copy
import random
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupShuffleSplit
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

FINDINGS = ["Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule",
            "Pneumonia", "Pneumothorax", "Consolidation", "Edema", "Emphysema", "Fibrosis",
            "Pleural_Thickening", "Hernia"]


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--images", type=Path, default=Path("data/cxr14/images"))
    p.add_argument("--labels", type=Path, default=Path("data/cxr14/Data_Entry_2017.csv"))
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--ckpt", type=Path, default=Path("cxr14_last.pt"))
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class RandomShiftScale:
    """Small affine jitter; the parameters are drawn with `random`."""

    def __call__(self, img):
        angle = random.uniform(-7, 7)
        scale = random.uniform(0.95, 1.05)
        dx, dy = random.randint(-12, 12), random.randint(-12, 12)
        return transforms.functional.affine(img, angle=angle, translate=(dx, dy), scale=scale, shear=0.0)


class CXR14(Dataset):
    def __init__(self, frame, root, train):
        self.files = frame["Image Index"].tolist()
        self.targets = torch.tensor(frame[FINDINGS].to_numpy(), dtype=torch.float32)
        self.root = root
        aug = [RandomShiftScale(), transforms.RandomHorizontalFlip()] if train else []
        self.tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), *aug,
                                      transforms.ToTensor(),
                                      transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(self.root / self.files[i]).convert("RGB")
        return self.tf(img), self.targets[i]


def load_frame(path):
    df = pd.read_csv(path)
    for f in FINDINGS:
        df[f] = df["Finding Labels"].str.contains(f, regex=False).astype(np.float32)
    return df


def build_model():
    net = models.densenet121(weights=models.DenseNet121_Weights.IMAGENET1K_V1)
    net.classifier = nn.Linear(net.classifier.in_features, len(FINDINGS))
    return net


@torch.no_grad()
def mean_auroc(model, loader, device):
    model.eval()
    probs, targets = [], []
    for x, y in loader:
        probs.append(torch.sigmoid(model(x.to(device))).cpu())
        targets.append(y)
    probs, targets = torch.cat(probs).numpy(), torch.cat(targets).numpy()
    aucs = [roc_auc_score(targets[:, k], probs[:, k]) for k in range(len(FINDINGS))
            if 0 < targets[:, k].sum() < len(targets)]
    return float(np.mean(aucs))


def main():
    args = get_args()
    seed_everything(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    df = load_frame(args.labels)
    split = GroupShuffleSplit(n_splits=1, test_size=0.15, random_state=args.seed)
    tr_idx, va_idx = next(split.split(df, groups=df["Patient ID"]))
    train_df, valid_df = df.iloc[tr_idx], df.iloc[va_idx]
    train_dl = DataLoader(CXR14(train_df, args.images, True), batch_size=args.batch_size,
                          shuffle=True, drop_last=True, num_workers=8, pin_memory=True)
    valid_dl = DataLoader(CXR14(valid_df, args.images, False), batch_size=64, num_workers=8)

    model = build_model().to(device)
    positives = torch.tensor(train_df[FINDINGS].to_numpy().sum(0), dtype=torch.float32)
    pos_weight = ((len(train_df) - positives) / positives.clamp(min=1)).to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.1, patience=1)

    start, best_auc, best_state = 0, 0.0, None
    if args.resume and args.ckpt.exists():
        ckpt = torch.load(args.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start, best_auc = ckpt["epoch"] + 1, ckpt["best_auc"]

    for epoch in range(start, args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        auc = mean_auroc(model, valid_dl, device)
        scheduler.step(auc)
        if auc > best_auc:
            best_auc, best_state = auc, copy.deepcopy(model.state_dict())
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch, "best_auc": best_auc}, args.ckpt)
        print(f"epoch {epoch}: mean AUROC {auc:.4f} (best {best_auc:.4f}) "
              f"lr {optimizer.param_groups[0]['lr']:.1e}")

    if best_state is not None:
        model.load_state_dict(best_state)
        torch.save(model.state_dict(), "cxr14_best.pt")


if __name__ == "__main__":
    main()
