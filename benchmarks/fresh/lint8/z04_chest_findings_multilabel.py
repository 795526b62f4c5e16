"""Fourteen thoracic findings on ChestX-ray14: DenseNet-121, one logit per finding."""
import argparse
import os
import random

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupShuffleSplit
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

FINDINGS = ["Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule", "Pneumonia",
            "Pneumothorax", "Consolidation", "Edema", "Emphysema", "Fibrosis", "Pleural_Thickening", "Hernia"]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--csv", default="data/cxr14/Data_Entry_2017.csv")
    p.add_argument("--images", default="data/cxr14/images")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def multi_hot(labels):
    present = set(labels.split("|"))
    return np.array([f in present for f in FINDINGS], dtype=np.float32)


class ChestXrays(Dataset):
    def __init__(self, frame, image_dir, transform):
        self.files = frame["Image Index"].tolist()
        self.targets = np.stack([multi_hot(s) for s in frame["Finding Labels"]])
        self.image_dir, self.transform = image_dir, transform

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(os.path.join(self.image_dir, self.files[i])).convert("RGB")
        return self.transform(img), torch.from_numpy(self.targets[i])


def make_model():
    net = models.densenet121(weights=models.DenseNet121_Weights.IMAGENET1K_V1)
    net.classifier = nn.Linear(net.classifier.in_features, len(FINDINGS))
    return net


@torch.no_grad()
def evaluate(model, loader, criterion, device):
    model.eval()
    total, seen, probs, golds = 0.0, 0, [], []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        total += criterion(logits, y).item() * x.size(0)
        seen += x.size(0)
        probs.append(torch.sigmoid(logits).cpu())
        golds.append(y.cpu())
    probs, golds = torch.cat(probs).numpy(), torch.cat(golds).numpy()
    aucs = [roc_auc_score(golds[:, k], probs[:, k]) for k in range(len(FINDINGS)) if 0 < golds[:, k].sum() < len(golds)]
    return total / seen, float(np.mean(aucs))


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    frame = pd.read_csv(args.csv)
    split = GroupShuffleSplit(n_splits=1, test_size=0.15, random_state=args.seed)
    train_idx, val_idx = next(split.split(frame, groups=frame["Patient ID"]))
    train_df, val_df = frame.iloc[train_idx], frame.iloc[val_idx]

    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.Resize(256), transforms.RandomResizedCrop(224, scale=(0.8, 1.0)),
                                   transforms.RandomRotation(7), transforms.ToTensor(), norm])
    val_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), norm])
    train_ds = ChestXrays(train_df, args.images, train_tf)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                          drop_last=True, pin_memory=True)
    val_dl = DataLoader(ChestXrays(val_df, args.images, val_tf), batch_size=64, num_workers=args.workers)

    positives = train_ds.targets.sum(axis=0)
    pos_weight = torch.tensor((len(train_ds) - positives) / np.maximum(positives, 1), dtype=torch.float32, device=device)
    model = make_model().to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.1, patience=1)

    best_auc = 0.0
    for epoch in range(args.epochs):
        model.train()
        running, seen = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
            running += loss.item() * x.size(0)
            seen += x.size(0)
        val_loss, mean_auc = evaluate(model, val_dl, criterion, device)
        plateau.step(val_loss)
        print(f"epoch {epoch}  train {running / seen:.4f}  val {val_loss:.4f}  mean AUROC {mean_auc:.4f}")
        if mean_auc > best_auc:
            best_auc = mean_auc
            torch.save({"model": model.state_dict(), "epoch": epoch, "auroc": mean_auc}, "cxr14_densenet_best.pt")


if __name__ == "__main__":
    main()
