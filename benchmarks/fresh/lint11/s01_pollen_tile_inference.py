"""Batch inference for the pollen-grain classifier.

Reads every microscope tile in a folder, classifies it with the network trained by
train_pollen.py and writes one CSV row per tile with the top-3 taxa and their probabilities.

    python s01_pollen_tile_inference.py --weights runs/pollen/best.pt --tiles scans/2024-05-14 \
        --out predictions/2024-05-14.csv
"""
import argparse
import csv
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

TAXA = ["alnus", "ambrosia", "artemisia", "betula", "corylus", "fraxinus", "poaceae", "quercus", "other"]
GRAY_MEAN, GRAY_STD = 0.412, 0.187
IMAGE_SUFFIXES = {".png", ".tif", ".tiff", ".jpg"}


class PollenNet(nn.Module):
    def __init__(self, n_classes=len(TAXA)):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 64, 3, padding=1, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(0.3),
            nn.Linear(64 * 16 * 16, 256),
            nn.ReLU(inplace=True),
            nn.Linear(256, n_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = x.view(-1, 64 * 16 * 16)
        return self.classifier(x)


class TileFolder(Dataset):
    def __init__(self, root, tile_size):
        self.paths = sorted(p for p in Path(root).rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        self.tile_size = tile_size

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        path = self.paths[idx]
        img = Image.open(path).convert("L").resize((self.tile_size, self.tile_size), Image.BILINEAR)
        arr = np.asarray(img, dtype=np.float32) / 255.0
        arr = (arr - GRAY_MEAN) / GRAY_STD
        return torch.from_numpy(arr).unsqueeze(0), str(path)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--weights", required=True)
    p.add_argument("--tiles", required=True, help="folder of microscope tiles")
    p.add_argument("--out", default="predictions.csv")
    p.add_argument("--tile-size", type=int, default=128, help="tiles are resized to this many pixels")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--min-confidence", type=float, default=0.5)
    return p.parse_args()


def load_model(weights, device):
    model = PollenNet()
    state = torch.load(weights, map_location="cpu", weights_only=True)
    if "model" in state:
        state = state["model"]
    model.load_state_dict(state)
    return model.to(device)


def predict(model, loader, device):
    model.eval()
    rows = []
    for images, paths in loader:
        logits = model(images.to(device, non_blocking=True))
        probs = F.softmax(logits, dim=1).detach().cpu().numpy()
        for path, p in zip(paths, probs):
            top = np.argsort(p)[::-1][:3]
            rows.append((path, [(TAXA[i], float(p[i])) for i in top]))
    return rows


def write_csv(rows, out_path, min_conf):
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    uncertain = 0
    with open(out_path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["tile", "taxon_1", "p_1", "taxon_2", "p_2", "taxon_3", "p_3", "flag"])
        for path, top in rows:
            flag = "" if top[0][1] >= min_conf else "review"
            uncertain += flag == "review"
            writer.writerow([path] + [v for pair in top for v in (pair[0], f"{pair[1]:.4f}")] + [flag])
    return uncertain


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = TileFolder(args.tiles, args.tile_size)
    if len(dataset) == 0:
        raise SystemExit(f"no tiles found under {args.tiles}")
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        shuffle=False,
        num_workers=args.workers,
        pin_memory=device.type == "cuda",
    )
    model = load_model(args.weights, device)

    start = time.perf_counter()
    rows = predict(model, loader, device)
    elapsed = time.perf_counter() - start
    uncertain = write_csv(rows, args.out, args.min_confidence)

    counts = {}
    for _, top in rows:
        counts[top[0][0]] = counts.get(top[0][0], 0) + 1
    print(f"{len(rows)} tiles in {elapsed:.1f}s, {uncertain} flagged for review -> {args.out}")
    for taxon, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {taxon:<10s} {n}")


if __name__ == "__main__":
    main()
