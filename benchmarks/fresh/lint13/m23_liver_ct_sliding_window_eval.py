"""Evaluation of a trained 3-D liver/tumour segmentation network on LiTS-style CT volumes.

Volumes are stored as .npy (HU, z-y-x) with their label maps. Inference runs on overlapping
96^3 patches blended with a Gaussian importance map, then per-case Dice for liver and tumour
is written to a CSV.

python m23_liver_ct_sliding_window_eval.py --weights runs/lits/best.pt --cases data/lits/test
"""
import argparse
import csv
import glob
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv3(cin, cout):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.InstanceNorm3d(cout, affine=True),
                         nn.LeakyReLU(0.01), nn.Conv3d(cout, cout, 3, padding=1, bias=False),
                         nn.InstanceNorm3d(cout, affine=True), nn.LeakyReLU(0.01))


class UNet3D(nn.Module):
    def __init__(self, n_classes=3, w=(24, 48, 96, 192)):
        super().__init__()
        self.enc = nn.ModuleList([conv3(1, w[0])] + [conv3(w[i - 1], w[i]) for i in range(1, len(w))])
        self.up = nn.ModuleList(nn.ConvTranspose3d(w[i], w[i - 1], 2, stride=2) for i in range(len(w) - 1, 0, -1))
        self.dec = nn.ModuleList(conv3(2 * w[i - 1], w[i - 1]) for i in range(len(w) - 1, 0, -1))
        self.head = nn.Conv3d(w[0], n_classes, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.enc):
            x = block(x if i == 0 else F.max_pool3d(x, 2))
            skips.append(x)
        for up, dec, skip in zip(self.up, self.dec, reversed(skips[:-1])):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def gaussian_map(size, sigma_scale=0.125):
    coords = [torch.arange(s, dtype=torch.float32) - (s - 1) / 2 for s in size]
    grids = torch.meshgrid(*coords, indexing="ij")
    g = torch.exp(-sum((c / (s * sigma_scale)) ** 2 for c, s in zip(grids, size)) / 2)
    return (g / g.max()).clamp_min(1e-3)


@torch.no_grad()
class SlidingWindowPredictor:
    def __init__(self, model, patch=(96, 96, 96), overlap=0.5, device="cpu", n_classes=3):
        self.model, self.patch, self.device, self.n_classes = model, patch, device, n_classes
        self.step = [max(1, int(p * (1 - overlap))) for p in patch]
        self.weight = gaussian_map(patch).to(device)

    def starts(self, dim, p, s):
        last = max(dim - p, 0)
        return sorted(set(list(range(0, last + 1, s)) + [last]))

    def __call__(self, volume):
        vol = torch.from_numpy(volume).float().to(self.device)[None, None]
        pad = [max(p - d, 0) for d, p in zip(vol.shape[2:], self.patch)]
        vol = F.pad(vol, (0, pad[2], 0, pad[1], 0, pad[0]), value=-1.0)
        D, H, W = vol.shape[2:]
        acc = torch.zeros(self.n_classes, D, H, W, device=self.device)
        norm = torch.zeros(D, H, W, device=self.device)
        pd, ph, pw = self.patch
        for z in self.starts(D, pd, self.step[0]):
            for y in self.starts(H, ph, self.step[1]):
                for x in self.starts(W, pw, self.step[2]):
                    patch = vol[:, :, z:z + pd, y:y + ph, x:x + pw]
                    probs = self.model(patch).softmax(1)[0]
                    acc[:, z:z + pd, y:y + ph, x:x + pw] += probs * self.weight
                    norm[z:z + pd, y:y + ph, x:x + pw] += self.weight
        labels = (acc / norm).argmax(0)
        return labels[: volume.shape[0], : volume.shape[1], : volume.shape[2]].cpu().numpy()


def window_hu(vol, lo=-100.0, hi=250.0):
    return (np.clip(vol, lo, hi) - lo) / (hi - lo) * 2.0 - 1.0


def dice(pred, ref, label):
    p, r = pred >= label, ref >= label
    denom = p.sum() + r.sum()
    return 1.0 if denom == 0 else 2.0 * np.logical_and(p, r).sum() / denom


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default="runs/lits/best.pt")
    ap.add_argument("--cases", default="data/lits/test")
    ap.add_argument("--overlap", type=float, default=0.5)
    ap.add_argument("--out", default="reports/lits_dice.csv")
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = UNet3D()
    model.load_state_dict(torch.load(args.weights, map_location="cpu", weights_only=True))
    model.to(device).eval()
    predictor = SlidingWindowPredictor(model, overlap=args.overlap, device=device)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    results = []
    for path in sorted(glob.glob(os.path.join(args.cases, "volume-*.npy"))):
        case = os.path.basename(path)[len("volume-"):-len(".npy")]
        ct = window_hu(np.load(path).astype(np.float32))
        ref = np.load(os.path.join(args.cases, f"segmentation-{case}.npy"))
        pred = predictor(ct)
        results.append({"case": case, "liver_dice": round(dice(pred, ref, 1), 4), "tumour_dice": round(dice(pred, ref, 2), 4)})
        print(results[-1])
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["case", "liver_dice", "tumour_dice"])
        writer.writeheader()
        writer.writerows(results)
    print(f"mean liver Dice {np.mean([r['liver_dice'] for r in results]):.4f}  "
          f"mean tumour Dice {np.mean([r['tumour_dice'] for r in results]):.4f}")


if __name__ == "__main__":
    main()
