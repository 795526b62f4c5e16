"""Run a trained low-light enhancement network over the LOL eval15 pairs, save the outputs and
report PSNR/SSIM against the normal-light references.

    python eval_lowlight.py --weights runs/lol/best.pt --low data/LOL/eval15/low \
        --high data/LOL/eval15/high --out results/lol_eval15
"""
import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.LeakyReLU(0.2, inplace=True))


class EnhanceUNet(nn.Module):
    """Three-level U-Net that predicts a residual on top of the low-light input."""

    def __init__(self, width=32):
        super().__init__()
        self.enc1, self.enc2 = conv_block(3, width), conv_block(width, 2 * width)
        self.enc3 = conv_block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = conv_block(4 * width, 2 * width)
        self.up1 = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.dec1 = conv_block(2 * width, width)
        self.tail = nn.Conv2d(width, 3, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return x + self.tail(d1)


def load_image(path):
    arr = np.asarray(Image.open(path).convert("RGB"), dtype=np.float32) / 255.0
    return torch.from_numpy(arr).permute(2, 0, 1).unsqueeze(0)


def to_uint8(img):
    """(1, 3, H, W) float image in [0, 1] -> H x W x 3 uint8 array for PIL."""
    return (img[0].permute(1, 2, 0) * 255.0).round().byte().cpu().numpy()


def pad_to_multiple(x, m=4):
    h, w = x.shape[-2:]
    ph, pw = (m - h % m) % m, (m - w % m) % m
    return F.pad(x, (0, pw, 0, ph), mode="reflect"), (h, w)


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10.0 * np.log10(255.0 ** 2 / mse)


def ssim_gray(a, b, c1=(0.01 * 255) ** 2, c2=(0.03 * 255) ** 2):
    """Global-window SSIM on luminance; close enough for tracking runs."""
    ya = a.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    yb = b.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    ma, mb = ya.mean(), yb.mean()
    va, vb = ya.var(), yb.var()
    cov = ((ya - ma) * (yb - mb)).mean()
    return ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma ** 2 + mb ** 2 + c1) * (va + vb + c2))


@torch.inference_mode()
def enhance(model, low, device):
    x, (h, w) = pad_to_multiple(low.to(device))
    return model(x)[..., :h, :w]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", type=Path, required=True)
    ap.add_argument("--low", type=Path, required=True)
    ap.add_argument("--high", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("results/lol"))
    ap.add_argument("--width", type=int, default=32)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = EnhanceUNet(args.width)
    state = torch.load(args.weights, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"] if "model" in state else state)
    model.to(device).eval()

    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for low_path in sorted(args.low.glob("*.png")):
        out = enhance(model, load_image(low_path), device)
        pred = to_uint8(out)
        Image.fromarray(pred).save(args.out / low_path.name)
        ref = np.asarray(Image.open(args.high / low_path.name).convert("RGB"))
        rows.append((low_path.name, psnr(pred, ref), ssim_gray(pred, ref)))
        print(f"{low_path.name}: PSNR {rows[-1][1]:.2f} dB  SSIM {rows[-1][2]:.4f}")

    with open(args.out / "metrics.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["image", "psnr", "ssim"])
        writer.writerows(rows)
    print(f"mean PSNR {np.mean([r[1] for r in rows]):.2f} dB, "
          f"mean SSIM {np.mean([r[2] for r in rows]):.4f} over {len(rows)} images")


if __name__ == "__main__":
    main()
