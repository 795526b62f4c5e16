"""Dataset and loaders for cloud / cloud-shadow segmentation of Landsat-8 scenes.

Each sample is a 4-band (R, G, B, NIR) 384x384 tile saved as .npy with a matching single-band
label mask (0 clear, 1 cloud, 2 shadow, 255 nodata)."""

from pathlib import Path

import numpy as np
import torch
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader, Dataset

BAND_MEAN = torch.tensor([0.112, 0.104, 0.097, 0.231]).view(4, 1, 1)
BAND_STD = torch.tensor([0.081, 0.074, 0.071, 0.102]).view(4, 1, 1)
IGNORE = 255


class CloudTiles(Dataset):
    def __init__(self, root, split, augment=False):
        self.image_paths = sorted(Path(root, split, "images").glob("*.npy"))
        self.mask_dir = Path(root, split, "masks")
        self.geometric = None
        if augment:
            self.geometric = T.Compose([
                T.RandomHorizontalFlip(p=0.5),
                T.RandomVerticalFlip(p=0.5),
                T.RandomApply([T.RandomRotation(degrees=(90, 90))], p=0.5),
            ])

    def __len__(self):
        return len(self.image_paths)

    def load(self, index):
        path = self.image_paths[index]
        image = np.load(path).astype(np.float32) / 10000.0          # (4, H, W) reflectance
        mask = np.load(self.mask_dir / path.name).astype(np.int64)  # (H, W)
        return torch.from_numpy(image), torch.from_numpy(mask)

    def __getitem__(self, index):
        image, mask = self.load(index)
        if self.geometric is not None:
            image = self.geometric(image)
            mask = self.geometric(mask.unsqueeze(0)).squeeze(0)
        image = (image - BAND_MEAN) / BAND_STD
        return image, mask


def cloud_fraction(mask):
    valid = mask != IGNORE
    return ((mask == 1) & valid).sum().item() / max(valid.sum().item(), 1)


def make_loaders(root, batch_size=16, workers=6):
    train_ds = CloudTiles(root, "train", augment=True)
    val_ds = CloudTiles(root, "val", augment=False)
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=workers,
                          pin_memory=True, drop_last=True, persistent_workers=workers > 0)
    val_dl = DataLoader(val_ds, batch_size=batch_size, shuffle=False, num_workers=workers)
    return train_dl, val_dl


def class_weights(dataset, n_classes=3, max_tiles=500):
    """Inverse-frequency weights for the loss, estimated on a subset of training masks."""
    counts = torch.zeros(n_classes)
    for i in range(min(len(dataset), max_tiles)):
        _, mask = dataset.load(i)
        valid = mask[mask != IGNORE]
        counts += torch.bincount(valid, minlength=n_classes).float()
    freq = counts / counts.sum()
    return (1.0 / (freq + 1e-3)) / (1.0 / (freq + 1e-3)).sum() * n_classes


if __name__ == "__main__":
    train_dl, val_dl = make_loaders("data/landsat_clouds")
    images, masks = next(iter(train_dl))
    print(images.shape, images.dtype, masks.shape, masks.dtype)
    print("cloud fraction of first tile:", cloud_fraction(masks[0]))
    print("class weights:", class_weights(train_dl.dataset))
