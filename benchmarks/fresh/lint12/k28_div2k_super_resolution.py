"""x4 single-image super-resolution on DIV2K with a small EDSR-style network.

The network adds its residual to a bilinear upsampling of the input; the same upsampling is
reported as the baseline. Residual blocks can be recomputed in backward to save memory.
"""
import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset

SCALE = 4


def upsample_bilinear(x, scale=SCALE):
    return F.interpolate(x, scale_factor=scale, mode="bilinear", align_corners=False)


def to_tensor(img):
    return torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)


def to_uint8(x):
    return (x.clamp(0, 1) * 255).round().to(torch.uint8).permute(1, 2, 0).cpu().numpy()


class DIV2KPairs(Dataset):
    def __init__(self, folder, patch=None, repeat=1):
        self.files, self.patch, self.repeat = sorted(Path(folder).glob("*.png")), patch, repeat

    def __len__(self):
        return len(self.files) * self.repeat

    def __getitem__(self, i):
        hr = Image.open(self.files[i % len(self.files)]).convert("RGB")
        w, h = hr.size
        w, h = w - w % SCALE, h - h % SCALE
        if self.patch:
            left, top = random.randrange(0, w - self.patch + 1, SCALE), random.randrange(0, h - self.patch + 1, SCALE)
            hr = hr.crop((left, top, left + self.patch, top + self.patch))
            if random.random() < 0.5:
                hr = hr.transpose(Image.FLIP_LEFT_RIGHT)
        else:
            hr = hr.crop((0, 0, w, h))
        lr = hr.resize((hr.width // SCALE, hr.height // SCALE), Image.BICUBIC)
        return to_tensor(lr), to_tensor(hr)


class ResBlock(nn.Module):
    def __init__(self, c, res_scale=0.1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(True), nn.Conv2d(c, c, 3, padding=1))
        self.res_scale = res_scale

    def forward(self, x):
        return x + self.res_scale * self.body(x)


class EDSRLite(nn.Module):
    def __init__(self, c=64, n_blocks=16, recompute=False):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.ModuleList(ResBlock(c) for _ in range(n_blocks))
        self.tail = nn.Sequential(nn.Conv2d(c, c * 16, 3, padding=1), nn.PixelShuffle(4), nn.Conv2d(c, 3, 3, padding=1))
        self.recompute = recompute

    def forward(self, lr):
        h = self.head(lr)
        feat = h
        for block in self.blocks:
            feat = checkpoint(block, feat, use_reentrant=False) if self.recompute and self.training else block(feat)
        return upsample_bilinear(lr) + self.tail(feat + h)


def psnr_y(sr, hr, border=SCALE):
    coeffs = torch.tensor([65.481, 128.553, 24.966], device=sr.device).view(1, 3, 1, 1) / 255.0
    diff = ((sr - hr) * coeffs).sum(1)[..., border:-border, border:-border]
    return (-10 * torch.log10(diff.pow(2).mean(dim=(-2, -1)))).mean().item()


@torch.no_grad()
def validate(model, loader, device, save_dir=None):
    model.eval()
    model_psnr, base_psnr = [], []
    for k, (lr, hr) in enumerate(loader):
        lr, hr = lr.to(device), hr.to(device)
        sr = model(lr).clamp(0, 1)
        model_psnr.append(psnr_y(sr, hr))
        base_psnr.append(psnr_y(upsample_bilinear(lr).clamp(0, 1), hr))
        if save_dir is not None:
            Image.fromarray(to_uint8(sr[0])).save(save_dir / f"{k:04d}_x4.png")
    return float(np.mean(model_psnr)), float(np.mean(base_psnr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/DIV2K/DIV2K_train_HR")
    ap.add_argument("--valid", default="data/DIV2K/DIV2K_valid_HR")
    ap.add_argument("--patch", type=int, default=192)
    ap.add_argument("--iters", type=int, default=300_000)
    ap.add_argument("--recompute", action="store_true")
    args = ap.parse_args()
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_dl = DataLoader(DIV2KPairs(args.train, args.patch, repeat=20), batch_size=16, shuffle=True,
                          num_workers=8, drop_last=True, persistent_workers=True)
    valid_dl = DataLoader(DIV2KPairs(args.valid), batch_size=1)
    model = EDSRLite(recompute=args.recompute).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.999))
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[200_000], gamma=0.5)

    step = 0
    while step < args.iters:
        model.train()
        for lr, hr in train_dl:
            lr, hr = lr.to(device, non_blocking=True), hr.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                loss = F.l1_loss(model(lr).float(), hr)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            if step % 10_000 == 0:
                sr_psnr, bl_psnr = validate(model, valid_dl, device)
                print(f"iter {step}: L1 {loss.item():.4f} PSNR-Y {sr_psnr:.2f} dB (bilinear {bl_psnr:.2f} dB)")
                torch.save({"model": model.state_dict(), "step": step}, "edsr_lite_x4.pt")
                model.train()
            if step >= args.iters:
                break
    out = Path("sr_valid_x4")
    out.mkdir(exist_ok=True)
    print("final PSNR-Y %.2f dB" % validate(model, valid_dl, device, save_dir=out)[0])


if __name__ == "__main__":
    main()
