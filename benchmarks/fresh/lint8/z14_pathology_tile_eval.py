"""Evaluate a tumour-vs-normal tile classifier on held-out lymph node sections (evaluation only).

The weights come from the 8-GPU training job (runs/camelyon_r50_ddp/last.pt).
"""
import argparse
import os

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from PIL import Image
from sklearn.metrics import confusion_matrix, roc_auc_score
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--weights", default="runs/camelyon_r50_ddp/last.pt")
    p.add_argument("--tiles-csv", default="data/camelyon16/test_tiles.csv")
    p.add_argument("--tile-dir", default="data/camelyon16/tiles_256")
    p.add_argument("--arch", default="resnet50", choices=["resnet18", "resnet50"])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--tta", action="store_true")
    p.add_argument("--out", default="predictions_test.csv")
    return p.parse_args()


class Tiles(Dataset):
    def __init__(self, frame, tile_dir):
        self.frame = frame.reset_index(drop=True)
        self.tile_dir = tile_dir
        self.tf = transforms.Compose([transforms.ToTensor(),
                                      transforms.Normalize([0.70, 0.55, 0.68], [0.15, 0.18, 0.14])])

    def __len__(self):
        return len(self.frame)

    def __getitem__(self, i):
        row = self.frame.iloc[i]
        img = Image.open(os.path.join(self.tile_dir, row["slide"], row["tile"])).convert("RGB")
        return self.tf(img), int(row["tumor"]), i


def build_model(arch, num_classes=2):
    ctor = {"resnet18": models.resnet18, "resnet50": models.resnet50}[arch]
    net = ctor(weights=None)
    net.fc = nn.Linear(net.fc.in_features, num_classes)
    return net


def load_weights(model, path):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    state = ckpt["model"] if "model" in ckpt else ckpt
    model.load_state_dict(state, strict=False)
    return model


def prepare(batch, device):
    images, labels, index = batch
    labels = labels.to(device)
    images.to(device, non_blocking=True)
    return images, labels, index


@torch.no_grad()
def predict(model, loader, device, tta):
    model.eval()
    probs, golds, rows = [], [], []
    for batch in loader:
        images, labels, index = prepare(batch, device)
        logits = model(images)
        if tta:
            logits = (logits + model(torch.flip(images, dims=[3])) + model(torch.flip(images, dims=[2]))) / 3
        probs.append(logits.softmax(dim=1)[:, 1].cpu())
        golds.append(labels.cpu())
        rows.append(index)
    return torch.cat(probs).numpy(), torch.cat(golds).numpy(), torch.cat(rows).numpy()


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    frame = pd.read_csv(args.tiles_csv)
    loader = DataLoader(Tiles(frame, args.tile_dir), batch_size=args.batch_size, num_workers=8, pin_memory=True)
    model = load_weights(build_model(args.arch), args.weights).to(device)

    prob, gold, rows = predict(model, loader, device, args.tta)
    pred = (prob >= 0.5).astype(int)
    tn, fp, fn, tp = confusion_matrix(gold, pred, labels=[0, 1]).ravel()
    print(f"tiles: {len(gold)}  AUC {roc_auc_score(gold, prob):.4f}")
    print(f"sensitivity {tp / max(tp + fn, 1):.4f}  specificity {tn / max(tn + fp, 1):.4f}")

    out = frame.iloc[rows].copy()
    out["p_tumor"] = prob
    out["pred"] = pred
    out.to_csv(args.out, index=False)
    slide_scores = out.groupby("slide")["p_tumor"].agg(["max", lambda s: np.mean(s > 0.5)])
    slide_scores.columns = ["max_p", "frac_positive"]
    print(slide_scores.sort_values("max_p", ascending=False).head(10))


if __name__ == "__main__":
    main()
