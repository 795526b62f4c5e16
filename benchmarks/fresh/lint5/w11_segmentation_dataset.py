"""Data pipeline for building-footprint segmentation on 1024x1024 aerial tiles (RGB + binary mask)."""

from pathlib import Path

import numpy as np
import torch
import torchvision.transforms as T
import torchvision.transforms.functional as TF
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = (0.342, 0.361, 0.318)
STD = (0.171, 0.158, 0.153)


class FootprintTiles(Dataset):
    def __init__(self, root, split="train", crop=512, seed=0):
        root = Path(root)
        self.images = sorted((root / split / "images").glob("*.tif"))
        self.masks = [root / split / "masks" / p.name.replace(".tif", "_mask.png") for p in self.images]
        self.crop = crop
        self.train = split == "train"
        self.rng = np.random.default_rng(seed)
        self.geometric = T.Compose([T.RandomHorizontalFlip(0.5), T.RandomVerticalFlip(0.5)])
        self.photometric = T.ColorJitter(brightness=0.2, contrast=0.2, saturation=0.1)
        self.normalize = T.Normalize(MEAN, STD)

    def __len__(self):
        return len(self.images)

    def _random_window(self, height, width):
        top = int(self.rng.integers(0, height - self.crop + 1))
        left = int(self.rng.integers(0, width - self.crop + 1))
        return top, left

    def __getitem__(self, idx):
        image = TF.pil_to_tensor(Image.open(self.images[idx]).convert("RGB"))
        mask = TF.pil_to_tensor(Image.open(self.masks[idx]).convert("L"))
        if self.train:
            top, left = self._random_window(image.shape[1], image.shape[2])
            image = TF.crop(image, top, left, self.crop, self.crop)
            mask = TF.crop(mask, top, left, self.crop, self.crop)
            image = self.geometric(image)
            mask = self.geometric(mask)
            image = self.photometric(image)
        else:
            image = TF.center_crop(image, self.crop)
            mask = TF.center_crop(mask, self.crop)
        image = self.normalize(image.float() / 255.0)
        return image, (mask > 127).float()


def positive_fraction(dataset, n=200):
    sample = range(0, len(dataset), max(1, len(dataset) // n))
    return float(np.mean([(np.asarray(Image.open(dataset.masks[i])) > 127).mean() for i in sample]))


def build_loaders(root, batch_size=8, workers=8, crop=512):
    train = FootprintTiles(root, "train", crop=crop)
    val = FootprintTiles(root, "val", crop=crop)
    train_loader = DataLoader(
        train,
        batch_size=batch_size,
        shuffle=True,
        num_workers=workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=workers > 0,
    )
    val_loader = DataLoader(val, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True)
    return train_loader, val_loader


if __name__ == "__main__":
    tl, vl = build_loaders("data/footprints")
    images, masks = next(iter(tl))
    print(images.shape, images.dtype, masks.shape, masks.mean().item())
    print("building pixels in train masks:", positive_fraction(tl.dataset))
    grid = torch.cat([images[:4, :1], masks[:4]], dim=0)
    print("grid for inspection:", tuple(grid.shape))
