"""Building footprint segmentation from aerial RGB tiles (Inria-style 5000x5000 tiles, random crops)."""
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset, get_worker_info

MEAN = torch.tensor([0.42, 0.44, 0.40]).view(3, 1, 1)
STD = torch.tensor([0.20, 0.19, 0.19]).view(3, 1, 1)


@dataclass
class Config:
    root: str = "data/inria/train"
    crop: int = 512
    crops_per_tile: int = 64
    batch_size: int = 8
    epochs: int = 40
    lr: float = 1e-3
    workers: int = 6
    seed: int = 11


class PairedCrops(Dataset):
    """Random crops of (image, mask) with flips and 90-degree turns drawn once per sample."""

    def __init__(self, tiles, cfg, seed):
        self.tiles, self.cfg = tiles, cfg
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.tiles) * self.cfg.crops_per_tile

    def __getitem__(self, i):
        img_path, mask_path = self.tiles[i // self.cfg.crops_per_tile]
        image = np.asarray(Image.open(img_path).convert("RGB"))
        mask = np.asarray(Image.open(mask_path).convert("L")) > 127
        c = self.cfg.crop
        top = self.rng.integers(0, image.shape[0] - c + 1)
        left = self.rng.integers(0, image.shape[1] - c + 1)
        flip, turns = self.rng.random() < 0.5, int(self.rng.integers(0, 4))
        pair = []
        for arr in (image[top:top + c, left:left + c], mask[top:top + c, left:left + c]):
            if flip:
                arr = arr[:, ::-1]
            pair.append(np.ascontiguousarray(np.rot90(arr, turns)))
        x = torch.from_numpy(pair[0]).permute(2, 0, 1).float().div(255.0)
        y = torch.from_numpy(pair[1]).float().unsqueeze(0)
        return (x - MEAN) / STD, y


def reseed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed % 2**32)


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class FootprintNet(nn.Module):
    def __init__(self, w=32):
        super().__init__()
        self.down = nn.ModuleList([nn.Sequential(conv_bn(3, w), conv_bn(w, w)),
                                   nn.Sequential(conv_bn(w, 2 * w), conv_bn(2 * w, 2 * w)),
                                   nn.Sequential(conv_bn(2 * w, 4 * w), conv_bn(4 * w, 4 * w))])
        self.up = nn.ModuleList([nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2), nn.ConvTranspose2d(2 * w, w, 2, stride=2)])
        self.fuse = nn.ModuleList([conv_bn(4 * w, 2 * w), conv_bn(2 * w, w)])
        self.out = nn.Conv2d(w, 1, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        for up, fuse, skip in zip(self.up, self.fuse, reversed(skips[:-1])):
            x = fuse(torch.cat([up(x), skip], dim=1))
        return self.out(x)


def tile_pairs(root):
    images = sorted(Path(root, "images").glob("*.tif"))
    return [(p, Path(root, "gt", p.name)) for p in images]


@torch.no_grad()
def iou(model, loader, device):
    model.eval()
    inter = union = 0.0
    for x, y in loader:
        pred = model(x.to(device)) > 0
        y = y.to(device).bool()
        inter += (pred & y).sum().item()
        union += (pred | y).sum().item()
    return inter / max(union, 1.0)


def main(cfg=Config()):
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tiles = tile_pairs(cfg.root)
    rng = np.random.default_rng(cfg.seed)
    order = rng.permutation(len(tiles))
    val_tiles = [tiles[k] for k in order[:10]]
    train_tiles = [tiles[k] for k in order[10:]]
    train_dl = DataLoader(PairedCrops(train_tiles, cfg, cfg.seed), batch_size=cfg.batch_size, shuffle=True,
                          num_workers=cfg.workers, worker_init_fn=reseed_worker, drop_last=True, persistent_workers=True)
    val_dl = DataLoader(PairedCrops(val_tiles, cfg, cfg.seed + 1), batch_size=cfg.batch_size,
                        num_workers=cfg.workers, worker_init_fn=reseed_worker)

    model = FootprintNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(cfg.epochs):
        model.train()
        total, seen = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * x.size(0)
            seen += x.size(0)
        sched.step()
        print(f"epoch {epoch:2d}  bce {total / seen:.4f}  val IoU {iou(model, val_dl, device):.4f}")
    torch.save(model.state_dict(), "footprint_net.pt")


if __name__ == "__main__":
    main()
