"""Data pipeline for a retinal-vessel segmentation dataset stored as .npy arrays (HWC images, HW masks)."""
import random
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def random_crop(img, mask, size):
    h, w = mask.shape
    top = random.randint(0, h - size)
    left = random.randint(0, w - size)
    return img[top : top + size, left : left + size], mask[top : top + size, left : left + size]


class VesselDataset(Dataset):
    """Each sample is a pair of files: <id>_img.npy (H, W, 3, uint8) and <id>_mask.npy (H, W, {0,1})."""

    def __init__(self, root, crop=256, train=True):
        self.ids = sorted(p.name[: -len("_img.npy")] for p in Path(root).glob("*_img.npy"))
        self.root = Path(root)
        self.crop = crop
        self.train = train

    def __len__(self):
        return len(self.ids)

    def _load(self, sid):
        img = np.load(self.root / f"{sid}_img.npy")
        mask = np.load(self.root / f"{sid}_mask.npy")
        return img, mask

    def to_tensor(self, img):
        img = (img.astype(np.float32) / 255.0 - MEAN) / STD
        h, w, c = img.shape
        return torch.from_numpy(np.ascontiguousarray(img)).reshape(c, h, w)

    def __getitem__(self, idx):
        img, mask = self._load(self.ids[idx])
        if self.train:
            img, mask = random_crop(img, mask, self.crop)
        x = self.to_tensor(img)
        y = torch.from_numpy(mask.astype(np.int64))
        if self.train:
            if random.random() < 0.5:
                x = torch.flip(x, dims=[2])
            if random.random() < 0.5:
                y = torch.flip(y, dims=[1])
            if random.random() < 0.5:
                x = x + 0.05 * torch.randn_like(x)
        return x, y


def seed_worker(worker_id):
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


def make_loaders(root, batch_size=8, workers=4):
    g = torch.Generator()
    g.manual_seed(0)
    train = VesselDataset(Path(root) / "train", train=True)
    val = VesselDataset(Path(root) / "val", train=False)
    train_dl = DataLoader(train, batch_size, shuffle=True, num_workers=workers, worker_init_fn=seed_worker, generator=g, drop_last=True)
    val_dl = DataLoader(val, batch_size=1, num_workers=workers)
    return train_dl, val_dl


if __name__ == "__main__":
    tl, vl = make_loaders("data/vessels")
    xb, yb = next(iter(tl))
    print(xb.shape, xb.dtype, yb.shape, yb.unique())
