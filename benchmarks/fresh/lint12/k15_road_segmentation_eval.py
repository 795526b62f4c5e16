"""Evaluate a road-extraction checkpoint on the Massachusetts Roads test tiles (1500x1500).

Sliding-window inference (512 px windows, 128 px overlap), optional horizontal-flip TTA,
road IoU / precision / recall at a 0.5 threshold, and binary masks written next to the metrics.
"""
import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torchvision.models import resnet34

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


class RoadNet(nn.Module):
    """ResNet-34 encoder, light FPN-style decoder; logits at 1/4 of the input resolution."""

    up_kwargs = {"mode": "bilinear", "align_corners": True}

    def __init__(self):
        super().__init__()
        enc = resnet34(weights=None)
        self.stem = nn.Sequential(enc.conv1, enc.bn1, enc.relu, enc.maxpool)
        self.layers = nn.ModuleList([enc.layer1, enc.layer2, enc.layer3, enc.layer4])
        self.lateral = nn.ModuleList([nn.Conv2d(c, 128, 1) for c in (64, 128, 256, 512)])
        self.fuse = nn.Sequential(nn.Conv2d(128, 128, 3, padding=1, bias=False), nn.BatchNorm2d(128),
                                  nn.ReLU(inplace=True), nn.Conv2d(128, 1, 1))

    def forward(self, x, out_size=None):
        feats, h = [], self.stem(x)
        for layer in self.layers:
            h = layer(h)
            feats.append(h)
        top = self.lateral[3](feats[3])
        for i in (2, 1, 0):
            top = self.lateral[i](feats[i]) + F.interpolate(top, size=feats[i].shape[-2:], **self.up_kwargs)
        logits = self.fuse(top)
        if out_size is not None:
            logits = F.interpolate(logits, size=out_size, **self.up_kwargs)
        return logits


def resize_logits(logits, size):
    return F.interpolate(logits, size=size, mode="bilinear")


def window_starts(length, window, stride):
    starts = list(range(0, max(length - window, 0) + 1, stride))
    if starts[-1] + window < length:
        starts.append(length - window)
    return starts


@torch.inference_mode()
def predict_tile(model, image, device, window=512, overlap=128, flip=True):
    x = ((image - MEAN) / STD).to(device)
    _, _, h, w = x.shape
    prob_sum = torch.zeros(1, 1, h, w, device=device)
    count = torch.zeros_like(prob_sum)
    for top in window_starts(h, window, window - overlap):
        for left in window_starts(w, window, window - overlap):
            crop = x[..., top:top + window, left:left + window]
            logits = resize_logits(model(crop), crop.shape[-2:])
            prob = torch.sigmoid(logits)
            if flip:
                flipped = resize_logits(model(crop.flip(-1)), crop.shape[-2:]).flip(-1)
                prob = 0.5 * (prob + torch.sigmoid(flipped))
            prob_sum[..., top:top + window, left:left + window] += prob
            count[..., top:top + window, left:left + window] += 1
    return (prob_sum / count)[0, 0].cpu()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", type=Path, required=True)
    ap.add_argument("--tiles", type=Path, default=Path("data/mass_roads/test/sat"))
    ap.add_argument("--masks", type=Path, default=Path("data/mass_roads/test/map"))
    ap.add_argument("--out", type=Path, default=Path("predictions/mass_roads"))
    ap.add_argument("--no-flip", action="store_true")
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = RoadNet()
    model.load_state_dict(torch.load(args.ckpt, map_location="cpu", weights_only=True))
    model.to(device).eval()
    args.out.mkdir(parents=True, exist_ok=True)

    tp = fp = fn = 0
    for tile_path in sorted(args.tiles.glob("*.tiff")):
        rgb = np.asarray(Image.open(tile_path).convert("RGB"), dtype=np.float32) / 255.0
        image = torch.from_numpy(rgb).permute(2, 0, 1).unsqueeze(0)
        pred = predict_tile(model, image, device, flip=not args.no_flip) > 0.5
        truth = torch.from_numpy(np.asarray(Image.open(args.masks / tile_path.with_suffix(".tif").name)) > 127)
        tp += int((pred & truth).sum())
        fp += int((pred & ~truth).sum())
        fn += int((~pred & truth).sum())
        Image.fromarray(pred.numpy().astype(np.uint8) * 255).save(args.out / f"{tile_path.stem}.png")
    iou = tp / max(tp + fp + fn, 1)
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    print(f"road IoU {iou:.4f}  precision {precision:.4f}  recall {recall:.4f}")


if __name__ == "__main__":
    main()
