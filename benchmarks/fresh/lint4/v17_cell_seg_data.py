"""Data preparation for nucleus segmentation (fluorescence microscopy, 256x256 crops).

The annotated set is small (about 600 crops), so every crop is expanded into its eight
dihedral variants once, cached as a single tensor file, and the cache is what the U-Net
trainer reads. build_loaders() returns the train and validation loaders.
"""

from pathlib import Path

import numpy as np
import tifffile
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split

CACHE = Path("cache/nuclei_d8.pt")
CROP = 256


def read_pairs(root):
    root = Path(root)
    images, masks = [], []
    for img_path in sorted((root / "images").glob("*.tif")):
        img = tifffile.imread(img_path).astype(np.float32)
        lo, hi = np.percentile(img, (1, 99.8))
        img = np.clip((img - lo) / max(hi - lo, 1e-6), 0, 1)
        mask = tifffile.imread(root / "masks" / img_path.name) > 0
        for r in range(0, img.shape[0] - CROP + 1, CROP):
            for c in range(0, img.shape[1] - CROP + 1, CROP):
                images.append(img[r:r + CROP, c:c + CROP])
                masks.append(mask[r:r + CROP, c:c + CROP])
    x = torch.from_numpy(np.stack(images)).unsqueeze(1)
    y = torch.from_numpy(np.stack(masks)).unsqueeze(1).float()
    return x, y


def dihedral_variants(x, y):
    xs, ys = [], []
    for k in range(4):
        for flip in (False, True):
            xr, yr = torch.rot90(x, k, dims=(-2, -1)), torch.rot90(y, k, dims=(-2, -1))
            if flip:
                xr, yr = xr.flip(-1), yr.flip(-1)
            xs.append(xr)
            ys.append(yr)
    return torch.cat(xs), torch.cat(ys)


def cached_dataset(root):
    if CACHE.exists():
        blob = torch.load(CACHE, weights_only=True)
        return TensorDataset(blob["x"], blob["y"])
    x, y = dihedral_variants(*read_pairs(root))
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"x": x, "y": y}, CACHE)
    return TensorDataset(x, y)


class IntensityJitter(Dataset):
    """Random gain and offset on the image only; the mask is left untouched."""

    def __init__(self, base, gain=0.15, offset=0.05):
        self.base, self.gain, self.offset = base, gain, offset

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        x, y = self.base[i]
        g = 1.0 + (torch.rand(()) * 2 - 1) * self.gain
        o = (torch.rand(()) * 2 - 1) * self.offset
        return (x * g + o).clamp(0, 1), y


def build_loaders(root="data/nuclei", batch_size=16, val_fraction=0.2, seed=0):
    full = cached_dataset(root)
    n_val = int(len(full) * val_fraction)
    train_part, val_part = random_split(full, [len(full) - n_val, n_val],
                                        generator=torch.Generator().manual_seed(seed))
    train_loader = DataLoader(IntensityJitter(train_part), batch_size=batch_size, shuffle=True,
                              num_workers=4, drop_last=True, persistent_workers=True)
    val_loader = DataLoader(val_part, batch_size=batch_size, num_workers=2)
    return train_loader, val_loader


if __name__ == "__main__":
    tr, va = build_loaders()
    xb, yb = next(iter(tr))
    print(len(tr.dataset), "train crops,", len(va.dataset), "validation crops")
    print("batch", tuple(xb.shape), "foreground fraction %.3f" % yb.mean().item())
