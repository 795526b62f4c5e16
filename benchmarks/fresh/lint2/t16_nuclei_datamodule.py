"""Data module for nuclei segmentation (microscopy tiles + instance-free binary masks), DDP-ready."""
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler, get_worker_info


class PairedAugment:
    """Flips, 90-degree rotations and a random crop, drawn once per sample and applied to image and mask."""

    def __init__(self, crop):
        self.crop = crop

    def __call__(self, image, mask, rng):
        k = int(rng.integers(0, 4))
        image, mask = np.rot90(image, k, axes=(0, 1)), np.rot90(mask, k, axes=(0, 1))
        if rng.random() < 0.5:
            image, mask = image[:, ::-1], mask[:, ::-1]
        h, w = mask.shape
        if h < self.crop or w < self.crop:
            ph, pw = max(self.crop - h, 0), max(self.crop - w, 0)
            image = np.pad(image, ((0, ph), (0, pw), (0, 0)), mode="reflect")
            mask = np.pad(mask, ((0, ph), (0, pw)), mode="constant")
            h, w = mask.shape
        top, left = int(rng.integers(0, h - self.crop + 1)), int(rng.integers(0, w - self.crop + 1))
        window = (slice(top, top + self.crop), slice(left, left + self.crop))
        return image[window], mask[window]


class NucleiTiles(Dataset):
    def __init__(self, root, names, crop=256, augment=True, seed=0):
        self.root, self.names = Path(root), list(names)
        self.augment = PairedAugment(crop) if augment else None
        self.rng = np.random.default_rng(seed)  # replaced in every worker by seed_worker

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        image = np.load(self.root / "images" / f"{self.names[i]}.npy")  # (H, W, 3) uint8
        mask = np.load(self.root / "masks" / f"{self.names[i]}.npy")  # (H, W) bool
        if self.augment is not None:
            image, mask = self.augment(image, mask, self.rng)
        x = torch.from_numpy(np.ascontiguousarray(image).astype(np.float32)).permute(2, 0, 1)
        x.div_(255.0).sub_(0.5).div_(0.25)
        y = torch.from_numpy(np.ascontiguousarray(mask).astype(np.float32)).unsqueeze(0)
        return x, y


def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed)


def build(root, batch_size=16, workers=6, val_fraction=0.15, seed=0):
    names = sorted(p.stem for p in (Path(root) / "images").glob("*.npy"))
    order = np.random.default_rng(seed).permutation(len(names))
    n_val = int(len(names) * val_fraction)
    val_names = [names[i] for i in order[:n_val]]
    train_names = [names[i] for i in order[n_val:]]
    train_ds = NucleiTiles(root, train_names, augment=True, seed=seed)
    val_ds = NucleiTiles(root, val_names, augment=False)
    distributed = dist.is_available() and dist.is_initialized()
    sampler = DistributedSampler(train_ds, shuffle=True, seed=seed) if distributed else None
    g = torch.Generator().manual_seed(seed)
    train_loader = DataLoader(
        train_ds, batch_size=batch_size, shuffle=sampler is None, sampler=sampler, num_workers=workers,
        worker_init_fn=seed_worker, generator=g, pin_memory=True, drop_last=True,
        prefetch_factor=4 if workers > 0 else None, persistent_workers=workers > 0,
    )
    val_loader = DataLoader(val_ds, batch_size=1, num_workers=min(workers, 2))
    return train_loader, val_loader


def epochs(loader, n_epochs):
    """Yield (epoch, batch) pairs, reshuffling the distributed sampler at each epoch."""
    for epoch in range(n_epochs):
        if isinstance(loader.sampler, DistributedSampler):
            loader.sampler.set_epoch(epoch)
        for batch in loader:
            yield epoch, batch


if __name__ == "__main__":
    train_loader, val_loader = build("data/nuclei", workers=2)
    for epoch, (x, y) in epochs(train_loader, 1):
        print(epoch, tuple(x.shape), x.mean().item(), tuple(y.shape), y.mean().item())
        break
