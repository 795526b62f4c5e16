"""Melanoma vs. benign lesions (ISIC 2020 JPEGs resized to 512 px) with EfficientNet-B0.

Per-channel statistics are measured on the training images once and stored in the checkpoint
so that the inference service normalises exactly as training did. Runs can be resumed.
"""
import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--csv", default="data/isic2020/train.csv")
    p.add_argument("--images", type=Path, default=Path("data/isic2020/jpeg512"))
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ckpt", type=Path, default=Path("isic_effb0.pt"))
    p.add_argument("--resume", action="store_true")
    return p.parse_args()


def set_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def split_by_patient(df, valid_frac=0.2):
    patients = df["patient_id"].unique()
    perm = np.random.permutation(len(patients))
    valid_patients = set(patients[perm[: int(valid_frac * len(patients))]])
    is_valid = df["patient_id"].isin(valid_patients)
    return df[~is_valid].reset_index(drop=True), df[is_valid].reset_index(drop=True)


def channel_stats(files, root, n=500):
    pixels = [np.asarray(Image.open(root / f"{f}.jpg").convert("RGB"), dtype=np.float32).reshape(-1, 3) / 255.0
              for f in files[:n]]
    stacked = np.concatenate(pixels)
    return stacked.mean(axis=0), stacked.std(axis=0)


class Lesions(Dataset):
    def __init__(self, df, root, mean, std, train):
        self.names, self.targets, self.root = df["image_name"].tolist(), df["target"].tolist(), root
        aug = [transforms.RandomResizedCrop(384, scale=(0.6, 1.0)), transforms.RandomHorizontalFlip(),
               transforms.RandomVerticalFlip(), transforms.ColorJitter(0.15, 0.15, 0.1, 0.02)]
        plain = [transforms.Resize(416), transforms.CenterCrop(384)]
        self.tf = transforms.Compose((aug if train else plain) +
                                     [transforms.ToTensor(), transforms.Normalize(mean.tolist(), std.tolist())])

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        img = Image.open(self.root / f"{self.names[i]}.jpg").convert("RGB")
        return self.tf(img), torch.tensor(self.targets[i], dtype=torch.float32)


def build_model():
    net = models.efficientnet_b0(weights=models.EfficientNet_B0_Weights.IMAGENET1K_V1)
    net.classifier[1] = nn.Linear(net.classifier[1].in_features, 1)
    return net


@torch.no_grad()
def predict(model, loader, device):
    model.eval()
    out, ys = [], []
    for x, y in loader:
        out.append(torch.sigmoid(model(x.to(device)).squeeze(1)).cpu())
        ys.append(y)
    return torch.cat(ys).numpy(), torch.cat(out).numpy()


def main():
    args = get_args()
    set_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_df, valid_df = split_by_patient(pd.read_csv(args.csv))

    model = build_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    start, best_auc = 0, 0.0
    if args.resume and args.ckpt.exists():
        ckpt = torch.load(args.ckpt, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start, best_auc, (mean, std) = ckpt["epoch"] + 1, ckpt["best_auc"], ckpt["pixel_stats"]
    else:
        mean, std = channel_stats(train_df["image_name"].tolist(), args.images)

    train_dl = DataLoader(Lesions(train_df, args.images, mean, std, True), batch_size=args.batch_size,
                          shuffle=True, drop_last=True, num_workers=8, pin_memory=True)
    valid_dl = DataLoader(Lesions(valid_df, args.images, mean, std, False), batch_size=64, num_workers=8)
    pos = float(train_df["target"].mean())
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor((1 - pos) / pos, device=device))

    for epoch in range(start, args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x).squeeze(1), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        y_true, y_prob = predict(model, valid_dl, device)
        auc = roc_auc_score(y_true, y_prob)
        best_auc = max(best_auc, auc)
        print(f"epoch {epoch:2d} valid AUC {auc:.4f} (best {best_auc:.4f})")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch, "best_auc": best_auc,
                    "pixel_stats": (mean, std)}, args.ckpt)


if __name__ == "__main__":
    main()
