"""x4 single-image super-resolution: DIV2K patches, a residual U-Net with a pixel-shuffle tail."""

import random
from pathlib import Path

import cv2
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SCALE = 4
PATCH = 192


class DIV2KPatches(Dataset):
    def __init__(self, root, patches_per_image=16):
        self.files = sorted(Path(root).glob("*.png"))
        self.per_image = patches_per_image

    def __len__(self):
        return len(self.files) * self.per_image

    def __getitem__(self, idx):
        bgr = cv2.imread(str(self.files[idx // self.per_image]), cv2.IMREAD_COLOR)
        rgb = bgr[:, :, ::-1].copy()
        h, w, c = rgb.shape
        top, left = random.randint(0, h - PATCH), random.randint(0, w - PATCH)
        crop = rgb[top : top + PATCH, left : left + PATCH]
        if random.random() < 0.5:
            crop = crop[:, ::-1].copy()
        hr = torch.from_numpy(crop).float().div_(255.0).reshape(c, PATCH, PATCH)
        lr = F.interpolate(hr[None], scale_factor=1 / SCALE, mode="bicubic", antialias=True, align_corners=False)[0]
        return lr.clamp_(0, 1), hr


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.LeakyReLU(0.2, inplace=True))


class SRUNet(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.enc1 = block(3, width)
        self.enc2 = block(width, width * 2)
        self.mid = block(width * 2, width * 2)
        self.up = nn.ConvTranspose2d(width * 2, width, 2, stride=2)
        self.dec1 = block(width * 2, width)
        self.tail = nn.Sequential(nn.Conv2d(width, 3 * SCALE ** 2, 3, padding=1), nn.PixelShuffle(SCALE))

    def forward(self, lr):
        e1 = self.enc1(lr)
        e2 = self.mid(self.enc2(F.max_pool2d(e1, 2)))
        d1 = self.dec1(torch.cat([self.up(e2), e1], dim=1))
        base = F.interpolate(lr, scale_factor=SCALE, mode="bicubic", align_corners=False)
        return base + self.tail(d1)


def psnr(sr, hr):
    mse = F.mse_loss(sr.clamp(0, 1), hr, reduction="none").mean(dim=(1, 2, 3))
    return 10 * torch.log10(1.0 / mse)


def train(root="data/DIV2K_train_HR", val_root="data/DIV2K_valid_HR", steps=300_000, device="cuda"):
    loader = DataLoader(DIV2KPatches(root), batch_size=16, shuffle=True, num_workers=8, drop_last=True,
                        persistent_workers=True)
    val = DataLoader(DIV2KPatches(val_root, patches_per_image=2), batch_size=16, num_workers=4)
    model = SRUNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.9, 0.99))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=1e-7)
    step = 0
    while step < steps:
        for lr_img, hr_img in loader:
            lr_img, hr_img = lr_img.to(device, non_blocking=True), hr_img.to(device, non_blocking=True)
            loss = F.l1_loss(model(lr_img), hr_img)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 5000 == 0:
                model.eval()
                with torch.no_grad():
                    scores = torch.cat([psnr(model(l.to(device)), h.to(device)) for l, h in val])
                model.train()
                print(f"step {step}: L1 {loss.item():.4f}  val PSNR {scores.mean().item():.2f} dB")
                torch.save(model.state_dict(), f"srunet_x4_{step}.pt")
            if step >= steps:
                break


if __name__ == "__main__":
    train()
