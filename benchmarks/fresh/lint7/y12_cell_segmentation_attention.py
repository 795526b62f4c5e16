"""Nucleus segmentation on H&E tiles with an attention-gated encoder (channel + spatial gates).

Tiles are 256x256 PNGs with binary masks of the same name under masks/.
"""
import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

DATA = os.environ.get("NUCLEI_DIR", "/data/monuseg_tiles")
EPOCHS, BATCH, LR = 60, 8, 2e-4


class ChannelGate(nn.Module):
    def __init__(self, c, r=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(c, c // r), nn.ReLU(inplace=True), nn.Linear(c // r, c))

    def forward(self, x):
        avg = self.mlp(x.mean(dim=(2, 3)))
        mx = self.mlp(x.amax(dim=(2, 3)))
        return x * torch.sigmoid(avg + mx)[:, :, None, None]


class SpatialGate(nn.Module):
    def __init__(self, k=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, k, padding=k // 2)

    def forward(self, x):
        pooled = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)
        weights = torch.softmax(self.conv(pooled), dim=1)
        return x * weights


class GatedBlock(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
            nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True),
        )
        self.cg = ChannelGate(c_out)
        self.sg = SpatialGate()

    def forward(self, x):
        return self.sg(self.cg(self.conv(x)))


class NucleiNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.e1, self.e2, self.e3 = GatedBlock(3, 32), GatedBlock(32, 64), GatedBlock(64, 128)
        self.d2 = GatedBlock(128 + 64, 64)
        self.d1 = GatedBlock(64 + 32, 32)
        self.out = nn.Conv2d(32, 1, 1)

    def forward(self, x):
        s1 = self.e1(x)
        s2 = self.e2(F.max_pool2d(s1, 2))
        b = self.e3(F.max_pool2d(s2, 2))
        d2 = self.d2(torch.cat([F.interpolate(b, scale_factor=2.0, mode="nearest"), s2], 1))
        d1 = self.d1(torch.cat([F.interpolate(d2, scale_factor=2.0, mode="nearest"), s1], 1))
        return self.out(d1)


class TileSet(Dataset):
    def __init__(self, split, flip=False):
        self.images = sorted(glob.glob(os.path.join(DATA, split, "images", "*.png")))
        self.flip = flip

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = np.asarray(Image.open(self.images[i]).convert("RGB"), dtype=np.float32) / 255.0
        mask = np.asarray(Image.open(self.images[i].replace("/images/", "/masks/")), dtype=np.float32) > 0
        x = torch.from_numpy(img).permute(2, 0, 1)
        y = torch.from_numpy(mask.astype(np.float32))[None]
        if self.flip and torch.rand(()) < 0.5:
            x, y = x.flip(-1), y.flip(-1)
        if self.flip and torch.rand(()) < 0.5:
            x, y = x.flip(-2), y.flip(-2)
        return (x - 0.5) / 0.25, y


def soft_dice_loss(logits, target):
    p = torch.sigmoid(logits)
    num = 2 * (p * target).sum((1, 2, 3)) + 1
    den = p.sum((1, 2, 3)) + target.sum((1, 2, 3)) + 1
    return 1 - (num / den).mean()


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(TileSet("train", flip=True), batch_size=BATCH, shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(TileSet("val"), batch_size=BATCH, num_workers=4)
    model = NucleiNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=LR)

    for epoch in range(EPOCHS):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.binary_cross_entropy_with_logits(logits, y) + soft_dice_loss(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        scores = []
        with torch.no_grad():
            for x, y in val_dl:
                pred = (model(x.to(device)) > 0).float().cpu()
                inter = (pred * y).sum((1, 2, 3))
                union = ((pred + y) > 0).float().sum((1, 2, 3)).clamp(min=1)
                scores.append(inter / union)
        print(f"epoch {epoch:02d} loss {loss.item():.4f} val IoU {torch.cat(scores).mean():.4f}")
    torch.save(model.state_dict(), "nuclei_gated_unet.pt")


if __name__ == "__main__":
    main()
