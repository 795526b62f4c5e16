"""Data pipeline for aerial road segmentation: image tiles and their binary road masks."""
import json
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class Compose:
    def __init__(self, ops):
        self.ops = ops

    def __call__(self, arr):
        for op in self.ops:
            arr = op(arr)
        return arr


class RandomFlip:
    def __init__(self, rng, p=0.5):
        self.rng, self.p = rng, p

    def __call__(self, arr):
        if self.rng.random() < self.p:
            arr = arr[:, ::-1]
        if self.rng.random() < self.p:
            arr = arr[::-1, :]
        return arr


class RandomCrop:
    def __init__(self, rng, size):
        self.rng, self.size = rng, size

    def __call__(self, arr):
        h, w = arr.shape[:2]
        pad_h, pad_w = max(self.size - h, 0), max(self.size - w, 0)
        if pad_h or pad_w:
            widths = [(0, pad_h), (0, pad_w)] + [(0, 0)] * (arr.ndim - 2)
            arr = np.pad(arr, widths, mode="constant")
            h, w = arr.shape[:2]
        top = int(self.rng.integers(0, h - self.size + 1))
        left = int(self.rng.integers(0, w - self.size + 1))
        return arr[top : top + self.size, left : left + self.size]


class RoadTiles(Dataset):
    def __init__(self, root, split, crop=512, seed=0):
        root = Path(root)
        names = json.loads((root / "splits.json").read_text())[split]
        self.images = [root / "images" / f"{n}.png" for n in names]
        self.masks = [root / "masks" / f"{n}.png" for n in names]
        self.train = split == "train"
        self.rng = np.random.default_rng(seed)
        self.augment = Compose([RandomFlip(self.rng), RandomCrop(self.rng, crop)])

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        image = np.asarray(Image.open(self.images[idx]).convert("RGB"), dtype=np.float32) / 255.0
        mask = (np.asarray(Image.open(self.masks[idx]).convert("L")) > 127).astype(np.int64)
        if self.train:
            image = self.augment(image)
            mask = self.augment(mask)
        image = (image - MEAN) / STD
        image = torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)))
        mask = torch.from_numpy(np.ascontiguousarray(mask))
        return image, mask


def make_loaders(root, batch_size=8, workers=8):
    train_ds = RoadTiles(root, "train")
    val_ds = RoadTiles(root, "val")
    train_loader = DataLoader(
        train_ds,
        batch_size=batch_size,
        shuffle=True,
        num_workers=workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=True,
    )
    val_loader = DataLoader(val_ds, batch_size=1, shuffle=False, num_workers=2)
    return train_loader, val_loader


if __name__ == "__main__":
    import sys

    train_loader, val_loader = make_loaders(sys.argv[1] if len(sys.argv) > 1 else "data/roads")
    images, masks = next(iter(train_loader))
    print("train batch", tuple(images.shape), tuple(masks.shape), "road fraction", masks.float().mean().item())
    image, mask = next(iter(val_loader))
    print("val sample", tuple(image.shape), tuple(mask.shape))
