"""Evaluate the five-fold EfficientNet ensemble on the held-out ISIC dermoscopy test set.

Each fold's checkpoint holds the exponential moving average of its weights, kept during training
by torch.optim.swa_utils.AveragedModel, under the key "ema".
"""
import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms as T

CLASSES = ["MEL", "NV", "BCC", "AK", "BKL", "DF", "VASC", "SCC"]


def arguments():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoints", type=Path, nargs="+",
                    default=[Path(f"runs/isic_fold{k}/best.pt") for k in range(5)])
    ap.add_argument("--test-csv", type=Path, default=Path("data/isic/test_labels.csv"))
    ap.add_argument("--images", type=Path, default=Path("data/isic/test_images"))
    ap.add_argument("--size", type=int, default=384)
    ap.add_argument("--tta", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("runs/isic_ensemble_probs.csv"))
    return ap.parse_args()


class Lesions(Dataset):
    def __init__(self, csv_path, folder, size):
        with open(csv_path) as f:
            rows = list(csv.DictReader(f))
        self.ids = [r["image"] for r in rows]
        self.labels = [int(np.argmax([float(r[c]) for c in CLASSES])) for r in rows]
        self.folder = folder
        self.tf = T.Compose([T.Resize(size), T.CenterCrop(size), T.ToTensor(),
                             T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.tf(Image.open(self.folder / f"{self.ids[i]}.jpg").convert("RGB")), self.labels[i]


def efficientnet(num_classes):
    net = torchvision.models.efficientnet_b3(weights=None)
    net.classifier[-1] = nn.Linear(net.classifier[-1].in_features, num_classes)
    return net


def load_member(path, device):
    net = efficientnet(len(CLASSES))
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    report = net.load_state_dict(ckpt["ema"], strict=False)
    print(f"{path}: {len(report.unexpected_keys)} extra entries ignored")
    return net.to(device)


def predict(members, images, tta):
    views = [images]
    if tta:
        views += [images.flip(-1), images.flip(-2), images.flip(-1).flip(-2)]
    probs = 0.0
    for net in members:
        for v in views:
            probs = probs + net(v).softmax(dim=1)
    return probs / (len(members) * len(views))


def summarize(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    recalls = []
    for k, name in enumerate(CLASSES):
        support = (y_true == k).sum()
        recall = ((y_pred == k) & (y_true == k)).sum() / max(support, 1)
        recalls.append(recall)
        print(f"  {name:5s} support {support:5d} recall {recall:.3f}")
    print(f"balanced multiclass accuracy {np.mean(recalls):.4f}, accuracy {(y_true == y_pred).mean():.4f}")


def main():
    args = arguments()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    test_set = Lesions(args.test_csv, args.images, args.size)
    loader = DataLoader(test_set, batch_size=32, num_workers=8)
    members = [load_member(p, device) for p in args.checkpoints]

    all_probs, y_true = [], []
    with torch.inference_mode():
        for images, labels in loader:
            all_probs.append(predict(members, images.to(device), args.tta).cpu())
            y_true.extend(labels.tolist())
    probs = torch.cat(all_probs)
    summarize(y_true, probs.argmax(dim=1).tolist())

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["image"] + CLASSES)
        for image_id, row in zip(test_set.ids, probs.tolist()):
            writer.writerow([image_id] + [f"{p:.5f}" for p in row])


if __name__ == "__main__":
    main()
