"""Fourteen thoracic findings on frontal chest radiographs (NIH ChestX-ray14 metadata layout)."""
import copy
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torchvision
from PIL import Image
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupShuffleSplit
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms as T

FINDINGS = ["Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule", "Pneumonia",
            "Pneumothorax", "Consolidation", "Edema", "Emphysema", "Fibrosis", "Pleural_Thickening", "Hernia"]


@dataclass
class Setup:
    csv: Path = Path("data/cxr14/Data_Entry_2017.csv")
    images: Path = Path("data/cxr14/images")
    size: int = 320
    batch: int = 32
    epochs: int = 12
    max_lr: float = 3e-4
    clip: float = 2.0
    seed: int = 8


class Radiographs(Dataset):
    def __init__(self, frame, images, transform):
        self.files = [images / name for name in frame["Image Index"]]
        labels = frame["Finding Labels"].str.split("|")
        self.targets = torch.tensor([[float(f in row) for f in FINDINGS] for row in labels])
        self.transform = transform

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.transform(Image.open(self.files[i]).convert("RGB")), self.targets[i]


def patient_split(frame, seed):
    outer = GroupShuffleSplit(n_splits=1, test_size=0.2, random_state=seed)
    dev_idx, test_idx = next(outer.split(frame, groups=frame["Patient ID"]))
    dev = frame.iloc[dev_idx]
    inner = GroupShuffleSplit(n_splits=1, test_size=0.1, random_state=seed)
    tr_idx, va_idx = next(inner.split(dev, groups=dev["Patient ID"]))
    return dev.iloc[tr_idx], dev.iloc[va_idx], frame.iloc[test_idx]


def build_network():
    net = torchvision.models.densenet121(weights=torchvision.models.DenseNet121_Weights.DEFAULT)
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


def main(s=Setup()):
    torch.manual_seed(s.seed)
    np.random.seed(s.seed)
    frame = pd.read_csv(s.csv)
    train_df, valid_df, test_df = patient_split(frame, s.seed)

    norm = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = T.Compose([T.RandomResizedCrop(s.size, scale=(0.75, 1.0)), T.RandomRotation(7),
                          T.ToTensor(), norm])
    eval_tf = T.Compose([T.Resize(s.size), T.CenterCrop(s.size), T.ToTensor(), norm])
    train_set = Radiographs(train_df, s.images, train_tf)
    loaders = {
        "train": DataLoader(train_set, s.batch, shuffle=True, num_workers=8, drop_last=True, pin_memory=True),
        "valid": DataLoader(Radiographs(valid_df, s.images, eval_tf), 64, num_workers=8),
        "test": DataLoader(Radiographs(test_df, s.images, eval_tf), 64, num_workers=8),
    }

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = build_network().to(device)
    positives = train_set.targets.sum(0)
    pos_weight = ((len(train_set) - positives) / positives.clamp(min=1)).clamp(max=50).to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=s.max_lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=s.max_lr, epochs=s.epochs,
                                                    steps_per_epoch=len(loaders["train"]))

    best_auc, best_state = 0.0, None
    for epoch in range(s.epochs):
        model.train()
        total, seen = 0.0, 0
        for x, y in loaders["train"]:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), s.clip)
            optimizer.step()
            scheduler.step()
            total += loss.item() * y.size(0)
            seen += y.size(0)
        auc = mean_auroc(model, loaders["valid"], device)
        print(f"epoch {epoch:02d} loss {total / seen:.4f} valid mean AUROC {auc:.4f}")
        if auc > best_auc:
            best_auc, best_state = auc, copy.deepcopy(model.state_dict())

    model.load_state_dict(best_state)
    print(f"test mean AUROC {mean_auroc(model, loaders['test'], device):.4f}")
    torch.save({"model": best_state, "findings": FINDINGS, "valid_auroc": best_auc}, "cxr14_densenet.pt")


if __name__ == "__main__":
    main()
