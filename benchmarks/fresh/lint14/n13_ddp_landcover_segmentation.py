import argparse
import os
import random
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

CLASSES = 7
IGNORE = 255
BAND_MEAN = np.array([0.337, 0.360, 0.273], dtype=np.float32)
BAND_STD = np.array([0.102, 0.085, 0.078], dtype=np.float32)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--tiles", default="data/landcover/tiles")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/landcover")
    return p.parse_args()


class Tiles(Dataset):
    def __init__(self, files, train):
        self.files, self.train = files, train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        with np.load(self.files[index]) as tile:
            image = (tile["image"].astype(np.float32) / 255.0 - BAND_MEAN) / BAND_STD
            mask = tile["mask"].astype(np.int64)
        image = torch.from_numpy(image).permute(2, 0, 1)
        mask = torch.from_numpy(mask)
        if self.train:
            if torch.rand(()) < 0.5:
                image, mask = torch.flip(image, dims=[-1]), torch.flip(mask, dims=[-1])
            if torch.rand(()) < 0.5:
                image, mask = torch.flip(image, dims=[-2]), torch.flip(mask, dims=[-2])
        return image.contiguous(), mask.contiguous()


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SegNet(nn.Module):
    def __init__(self, classes, width=32):
        super().__init__()
        self.enc1, self.enc2 = block(3, width), block(width, width * 2)
        self.enc3, self.enc4 = block(width * 2, width * 4), block(width * 4, width * 8)
        self.dec3, self.dec2 = block(width * 12, width * 4), block(width * 6, width * 2)
        self.dec1 = block(width * 3, width)
        self.head = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        e4 = self.enc4(F.max_pool2d(e3, 2))
        up = lambda t, ref: F.interpolate(t, size=ref.shape[-2:], mode="bilinear", align_corners=False)
        d3 = self.dec3(torch.cat([up(e4, e3), e3], 1))
        d2 = self.dec2(torch.cat([up(d3, e2), e2], 1))
        d1 = self.dec1(torch.cat([up(d2, e1), e1], 1))
        return self.head(d1)


def confusion(pred, target, classes):
    valid = target != IGNORE
    idx = target[valid] * classes + pred[valid]
    return torch.bincount(idx, minlength=classes * classes).reshape(classes, classes)


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    random.seed(args.seed + rank)
    np.random.seed(args.seed + rank)
    torch.manual_seed(args.seed + rank)
    files = sorted(str(p) for p in Path(args.tiles).glob("*.npz"))
    random.Random(args.seed).shuffle(files)
    n_val = len(files) // 10
    train_set, val_set = Tiles(files[n_val:], train=True), Tiles(files[:n_val], train=False)
    train_sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler, num_workers=4,
                              pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, sampler=val_sampler, num_workers=4)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(SegNet(CLASSES)).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=args.epochs, power=0.9)
    out = Path(args.out)
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        for images, masks in train_loader:
            images, masks = images.to(device, non_blocking=True), masks.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(images)
            loss = F.cross_entropy(logits.float(), masks, ignore_index=IGNORE)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        scheduler.step()
        model.eval()
        cm = torch.zeros(CLASSES, CLASSES, dtype=torch.int64, device=device)
        with torch.no_grad():
            for images, masks in val_loader:
                logits = model(images.to(device))
                cm += confusion(logits.argmax(1), masks.to(device), CLASSES)
        dist.all_reduce(cm)
        inter = cm.diag().double()
        union = cm.sum(0).double() + cm.sum(1).double() - inter
        miou = (inter / union.clamp(min=1)).mean().item()
        if rank == 0:
            print(f"epoch {epoch:03d} loss {loss.item():.4f} mIoU {miou:.4f}")
            out.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.module.state_dict(), "epoch": epoch, "miou": miou}, out / "last.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
