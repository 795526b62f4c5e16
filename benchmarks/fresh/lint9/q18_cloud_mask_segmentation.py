"""Cloud masking for Landsat-8 scenes (38-Cloud patches, bands R, G, B, NIR) with a small U-Net.

384 x 384 patches do not fit in large batches on our 12 GB cards, so gradients are accumulated
over several micro-batches per optimizer step.
"""
import argparse
import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BAND_MEAN = torch.tensor([0.28, 0.27, 0.29, 0.33]).view(4, 1, 1)
BAND_STD = torch.tensor([0.21, 0.20, 0.21, 0.19]).view(4, 1, 1)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/38cloud_npz")
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--micro-batch", type=int, default=8)
    p.add_argument("--accum-steps", type=int, default=4, help="micro-batches per optimizer step")
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--base", type=int, default=32)
    return p.parse_args()


class CloudPatches(Dataset):
    def __init__(self, files, augment):
        self.files, self.augment = files, augment

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        d = np.load(self.files[i])
        x = (torch.from_numpy(d["image"].astype(np.float32)) - BAND_MEAN) / BAND_STD
        y = torch.from_numpy(d["mask"].astype(np.float32))[None]
        if self.augment:
            k = int(torch.randint(0, 4, (1,)))
            x, y = torch.rot90(x, k, (1, 2)), torch.rot90(y, k, (1, 2))
            if torch.rand(()) < 0.5:
                x, y = x.flip(-1), y.flip(-1)
        return x, y


def double_conv(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, in_ch=4, base=32):
        super().__init__()
        chs = [base, base * 2, base * 4, base * 8]
        self.downs = nn.ModuleList()
        prev = in_ch
        for c in chs:
            self.downs.append(double_conv(prev, c))
            prev = c
        self.bottom = double_conv(chs[-1], chs[-1] * 2)
        self.ups = nn.ModuleList(nn.ConvTranspose2d(c * 2, c, 2, stride=2) for c in reversed(chs))
        self.dec = nn.ModuleList(double_conv(c * 2, c) for c in reversed(chs))
        self.out = nn.Conv2d(base, 1, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, dec, skip in zip(self.ups, self.dec, reversed(skips)):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.out(x)


def bce_dice(logits, target, eps=1.0):
    bce = F.binary_cross_entropy_with_logits(logits, target)
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum((1, 2, 3))
    dice = (2 * inter + eps) / (prob.sum((1, 2, 3)) + target.sum((1, 2, 3)) + eps)
    return bce + (1 - dice).mean()


@torch.no_grad()
def jaccard(model, loader, device):
    model.eval()
    inter, union = 0.0, 0.0
    for x, y in loader:
        pred = (model(x.to(device)) > 0).float()
        y = y.to(device)
        inter += (pred * y).sum().item()
        union += ((pred + y) > 0).float().sum().item()
    return inter / max(union, 1.0)


def main():
    args = get_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    files = sorted(glob.glob(os.path.join(args.root, "*.npz")))
    scenes = sorted({os.path.basename(f).split("_patch")[0] for f in files})
    val_scenes = set(scenes[::6])
    train_files = [f for f in files if os.path.basename(f).split("_patch")[0] not in val_scenes]
    val_files = [f for f in files if os.path.basename(f).split("_patch")[0] in val_scenes]
    train_dl = DataLoader(CloudPatches(train_files, True), batch_size=args.micro_batch, shuffle=True,
                          num_workers=4, drop_last=True)
    val_dl = DataLoader(CloudPatches(val_files, False), batch_size=16, num_workers=4)

    model = UNet(base=args.base).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=args.epochs, power=0.9)

    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        running, batches = 0.0, 0
        for step, (x, y) in enumerate(train_dl):
            x, y = x.to(device), y.to(device)
            loss = bce_dice(model(x), y)
            loss.backward()
            if (step + 1) % args.accum_steps == 0 or step + 1 == len(train_dl):
                optimizer.step()
                optimizer.zero_grad()
            running += loss.item()
            batches += 1
        scheduler.step()
        print(f"epoch {epoch + 1:02d} loss {running / batches:.4f} val IoU {jaccard(model, val_dl, device):.4f}")
        torch.save(model.state_dict(), "cloud_unet.pt")


if __name__ == "__main__":
    main()
