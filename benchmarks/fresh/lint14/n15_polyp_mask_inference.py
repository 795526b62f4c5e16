import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

MEAN = np.array([0.557, 0.321, 0.236], dtype=np.float32)
STD = np.array([0.318, 0.221, 0.187], dtype=np.float32)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--images", default="data/kvasir_seg/test/images")
    p.add_argument("--masks", default="data/kvasir_seg/test/masks")
    p.add_argument("--checkpoint", default="runs/polyp_unet/best.pt")
    p.add_argument("--size", type=int, default=352)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--out", default="predictions/kvasir")
    return p.parse_args()


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class PolypUNet(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        w = [width, width * 2, width * 4, width * 8, width * 16]
        self.downs = nn.ModuleList([double_conv(3, w[0])] + [double_conv(w[i], w[i + 1]) for i in range(4)])
        self.bottleneck_drop = nn.Dropout2d(0.3)
        self.ups = nn.ModuleList([nn.ConvTranspose2d(w[i + 1], w[i], 2, stride=2) for i in reversed(range(4))])
        self.fuse = nn.ModuleList([double_conv(w[i] * 2, w[i]) for i in reversed(range(4))])
        self.head = nn.Conv2d(w[0], 1, 1)

    def forward(self, x):
        skips = []
        for i, down in enumerate(self.downs):
            x = down(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        x = self.bottleneck_drop(skips.pop())
        for up, fuse in zip(self.ups, self.fuse):
            x = fuse(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


def load_model(path, device):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model = PolypUNet(width=ckpt.get("width", 32))
    model.load_state_dict(ckpt["model"])
    model.to(device)
    return model


def prepare(path, size):
    with Image.open(path) as img:
        rgb = img.convert("RGB")
        original = rgb.size
        arr = np.asarray(rgb.resize((size, size), Image.BILINEAR), dtype=np.float32) / 255.0
    arr = (arr - MEAN) / STD
    return torch.from_numpy(arr.transpose(2, 0, 1).copy()), original


def predict_batch(model, batch, originals, device):
    with torch.no_grad():
        logits = model(batch.to(device))
    probs = []
    for i, (w, h) in enumerate(originals):
        prob = torch.sigmoid(logits[i])
        prob = F.interpolate(prob, size=(h, w), mode="bilinear", align_corners=False)
        probs.append(prob.squeeze(0).cpu().numpy())
    return probs


def dice(pred, truth):
    inter = np.logical_and(pred, truth).sum()
    return (2.0 * inter + 1e-6) / (pred.sum() + truth.sum() + 1e-6)


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_model(args.checkpoint, device)
    files = sorted(Path(args.images).glob("*.jpg"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scores = {}
    for start in range(0, len(files), args.batch_size):
        chunk = files[start:start + args.batch_size]
        tensors, originals = zip(*(prepare(f, args.size) for f in chunk))
        probs = predict_batch(model, torch.stack(tensors), originals, device)
        for f, prob in zip(chunk, probs):
            mask = prob >= args.threshold
            Image.fromarray((mask * 255).astype(np.uint8)).save(out / f"{f.stem}.png")
            truth_path = Path(args.masks) / f"{f.stem}.jpg"
            if truth_path.exists():
                with Image.open(truth_path) as t:
                    truth = np.asarray(t.convert("L")) > 127
                scores[f.stem] = float(dice(mask, truth))
    if scores:
        mean_dice = float(np.mean(list(scores.values())))
        (out / "dice.json").write_text(json.dumps({"mean_dice": mean_dice, "per_image": scores}, indent=2))
        print(f"{len(scores)} images, mean Dice {mean_dice:.4f}")


if __name__ == "__main__":
    main()
