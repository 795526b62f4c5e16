"""Nucleus centre detection in fluorescence microscopy (Data Science Bowl 2018, stage 1).

Each nucleus becomes a Gaussian peak in a stride-2 heatmap; a small encoder-decoder predicts
it. Trainer with hooks for warm-up and logging.
"""
import glob
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

ROOT = "data/dsb2018/stage1_train"
CROP, STRIDE, SIGMA = 256, 2, 2.0


class NucleiCrops(Dataset):
    def __init__(self, folders, train):
        self.folders, self.train = folders, train

    def __len__(self):
        return len(self.folders)

    def __getitem__(self, i):
        folder = self.folders[i]
        name = os.path.basename(folder)
        img = np.asarray(Image.open(os.path.join(folder, "images", name + ".png")).convert("RGB"), np.float32) / 255.0
        centres = []
        for mask_file in glob.glob(os.path.join(folder, "masks", "*.png")):
            ys, xs = np.nonzero(np.asarray(Image.open(mask_file)))
            centres.append((ys.mean(), xs.mean()))
        centres = np.array(centres, np.float32).reshape(-1, 2)
        h, w = img.shape[:2]
        if h < CROP or w < CROP:
            img = np.pad(img, ((0, max(0, CROP - h)), (0, max(0, CROP - w)), (0, 0)))
            h, w = img.shape[:2]
        top = int(torch.randint(0, h - CROP + 1, (1,))) if self.train else (h - CROP) // 2
        left = int(torch.randint(0, w - CROP + 1, (1,))) if self.train else (w - CROP) // 2
        img = img[top:top + CROP, left:left + CROP]
        centres = centres - np.array([top, left], np.float32)
        if self.train and torch.rand(()) < 0.5:
            img, centres[:, 1] = img[:, ::-1], CROP - 1 - centres[:, 1]
        x = torch.from_numpy(np.ascontiguousarray(img)).permute(2, 0, 1)
        return x, self.heatmap(centres)

    @staticmethod
    def heatmap(centres):
        size = CROP // STRIDE
        yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
        heat = torch.zeros(size, size)
        for cy, cx in centres / STRIDE:
            if 0 <= cy < size and 0 <= cx < size:
                cy, cx = round(float(cy)), round(float(cx))
                g = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * SIGMA ** 2))
                heat = torch.maximum(heat, g)
        return heat[None]


def conv_bn(c_in, c_out, stride=1):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class NucleiNet(nn.Module):
    def __init__(self, prior=0.01):
        super().__init__()
        self.register_buffer("pixel_mean", torch.tensor([0.08, 0.08, 0.08]).view(1, 3, 1, 1))
        self.register_buffer("pixel_std", torch.tensor([0.15, 0.15, 0.15]).view(1, 3, 1, 1))
        self.enc = nn.Sequential(conv_bn(3, 32, 2), conv_bn(32, 32), conv_bn(32, 64, 2), conv_bn(64, 64),
                                 conv_bn(64, 128, 2), conv_bn(128, 128))
        self.dec = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False), conv_bn(128, 64),
                                 nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False), conv_bn(64, 32))
        self.heat = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(32, 1, 1))
        nn.init.constant_(self.heat[-1].bias, -math.log((1 - prior) / prior))

    def forward(self, x):
        x = (x - self.pixel_mean) / self.pixel_std
        return self.heat(self.dec(self.enc(x)))


def centre_focal_loss(logits, target, alpha=2.0, beta=4.0):
    p = torch.sigmoid(logits)
    pos = target.ge(0.999).float()
    pos_loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits), reduction="none") * (1 - p) ** alpha
    neg_loss = F.binary_cross_entropy_with_logits(logits, torch.zeros_like(logits), reduction="none") * p ** alpha
    loss = pos * pos_loss + (1 - pos) * (1 - target) ** beta * neg_loss
    return loss.sum() / pos.sum().clamp(min=1.0)


class Warmup:
    def __init__(self, steps):
        self.steps = steps

    def on_step_start(self, trainer, step):
        if step < self.steps:
            for group in trainer.optimizer.param_groups:
                group["lr"] = trainer.base_lr * (step + 1) / self.steps


class Trainer:
    def __init__(self, model, lr, epochs, hooks=(), device="cpu"):
        self.model, self.base_lr, self.epochs, self.hooks, self.device = model.to(device), lr, epochs, hooks, device
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

    def fire(self, event, *args):
        for hook in self.hooks:
            fn = getattr(hook, event, None)
            if fn is not None:
                fn(self, *args)

    def fit(self, train_dl, val_dl):
        step = 0
        for epoch in range(self.epochs):
            self.model.train()
            for x, heat in train_dl:
                self.fire("on_step_start", step)
                x, heat = x.to(self.device), heat.to(self.device)
                loss = centre_focal_loss(self.model(x), heat)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                step += 1
            print(f"epoch {epoch + 1:02d} last loss {loss.item():.4f} val loss {self.validate(val_dl):.4f}")
        torch.save(self.model.state_dict(), "nuclei_centernet.pt")

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        total, n = 0.0, 0
        for x, heat in loader:
            total += centre_focal_loss(self.model(x.to(self.device)), heat.to(self.device)).item() * x.size(0)
            n += x.size(0)
        return total / n


if __name__ == "__main__":
    torch.manual_seed(0)
    folders = sorted(glob.glob(os.path.join(ROOT, "*")))
    val = set(folders[::8])
    train_dl = DataLoader(NucleiCrops([f for f in folders if f not in val], True), batch_size=16, shuffle=True,
                          num_workers=4, drop_last=True)
    val_dl = DataLoader(NucleiCrops(sorted(val), False), batch_size=16, num_workers=4)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    Trainer(NucleiNet(), lr=1e-3, epochs=60, hooks=[Warmup(500)], device=device).fit(train_dl, val_dl)
