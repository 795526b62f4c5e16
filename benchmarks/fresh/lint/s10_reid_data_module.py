"""Data module for a person re-identification model: HWC frames to tensors, paired flips, seeded workers."""
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def hwc_to_chw(frame):
    """uint8 (H, W, 3) array -> float tensor (3, H, W) in [0, 1]."""
    return torch.from_numpy(frame).permute(2, 0, 1).float().div(255.0)


class ReIDFrames(Dataset):
    def __init__(self, frames, masks, identities, train=True):
        self.frames, self.masks, self.ids = frames, masks, identities
        self.train = train

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        img = hwc_to_chw(self.frames[i])
        mask = torch.from_numpy(self.masks[i]).unsqueeze(0).float()
        if self.train and random.random() < 0.5:
            img, mask = img.flip(-1), mask.flip(-1)  # the same flip for both
        img = F.interpolate(img[None], size=(256, 128), mode="bilinear", align_corners=False)[0]
        mask = F.interpolate(mask[None], size=(256, 128), mode="nearest")[0]
        return img, mask, self.ids[i]


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def embeddings_to_unit(emb):
    flat = emb.view(emb.size(0), -1)
    return F.normalize(flat, p=2, dim=1)


def build_loaders(train_arrays, val_arrays, batch_size=64, workers=4, seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    train_ds = ReIDFrames(*train_arrays, train=True)
    val_ds = ReIDFrames(*val_arrays, train=False)
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=workers,
                          worker_init_fn=seed_worker, generator=g, drop_last=True, persistent_workers=workers > 0)
    val_dl = DataLoader(val_ds, batch_size=batch_size, shuffle=False, num_workers=workers)
    return train_dl, val_dl


if __name__ == "__main__":
    n = 32
    frames = np.random.randint(0, 256, size=(n, 128, 64, 3), dtype=np.uint8)
    masks = (np.random.rand(n, 128, 64) > 0.5).astype(np.uint8)
    ids = np.random.randint(0, 8, size=n)
    tr, va = build_loaders((frames, masks, ids), (frames, masks, ids), batch_size=8, workers=0)
    img, mask, pid = next(iter(tr))
    print(img.shape, mask.shape, pid[:4], embeddings_to_unit(img).norm(dim=1)[:3])
