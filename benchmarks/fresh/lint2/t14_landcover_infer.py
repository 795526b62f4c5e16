"""Tiled land-cover inference over a large satellite scene.

    python t14_landcover_infer.py scene.tif --weights landcover_best.pt --out scene_classes.png
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

Image.MAX_IMAGE_PIXELS = None
BAND_MEAN = torch.tensor([0.355, 0.384, 0.341]).view(3, 1, 1)
BAND_STD = torch.tensor([0.181, 0.163, 0.157]).view(3, 1, 1)
N_CLASSES = 7


def cbr(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class LandCoverNet(nn.Module):
    """Encoder at stride 4 with a light context module; the training script calls forward()."""

    def __init__(self, n_classes=N_CLASSES, width=64):
        super().__init__()
        self.stem = nn.Sequential(cbr(3, width, 2), cbr(width, width), cbr(width, 2 * width, 2))
        self.context = nn.Sequential(
            nn.Conv2d(2 * width, 2 * width, 3, padding=2, dilation=2, bias=False), nn.BatchNorm2d(2 * width),
            nn.ReLU(inplace=True), cbr(2 * width, 2 * width),
        )
        self.classifier = nn.Conv2d(2 * width, n_classes, 1)

    def forward_lowres(self, x):
        return self.classifier(self.context(self.stem(x)))

    def forward(self, x):
        low = self.forward_lowres(x)
        return F.interpolate(low, size=x.shape[-2:], mode="bilinear", align_corners=True)


def load_model(path, device):
    model = LandCoverNet()
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"], strict=False)
    return model.to(device).eval()


def hann2d(size):
    w = torch.hann_window(size + 2, periodic=False)[1:-1]
    return torch.outer(w, w)


@torch.no_grad()
def predict_scene(model, image, tile, overlap, device):
    _, H, W = image.shape
    stride = tile - overlap
    pad_h, pad_w = (-(H - tile) % stride) if H > tile else tile - H, (-(W - tile) % stride) if W > tile else tile - W
    image = F.pad(image, (0, pad_w, 0, pad_h), mode="reflect")
    _, Hp, Wp = image.shape
    scores = torch.zeros(N_CLASSES, Hp, Wp)
    weight = torch.zeros(1, Hp, Wp)
    window = hann2d(tile)
    for top in range(0, Hp - tile + 1, stride):
        for left in range(0, Wp - tile + 1, stride):
            patch = image[:, top : top + tile, left : left + tile].unsqueeze(0).to(device)
            low = model.forward_lowres(patch)
            probs = F.interpolate(low, size=(tile, tile), mode="bilinear").softmax(dim=1)
            scores[:, top : top + tile, left : left + tile] += probs[0].cpu() * window
            weight[:, top : top + tile, left : left + tile] += window
    return (scores / weight.clamp(min=1e-6))[:, :H, :W]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scene")
    ap.add_argument("--weights", default="landcover_best.pt")
    ap.add_argument("--out", default="classes.png")
    ap.add_argument("--tile", type=int, default=512)
    ap.add_argument("--overlap", type=int, default=128)
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    rgb = np.asarray(Image.open(args.scene).convert("RGB"))  # (H, W, 3) uint8
    image = torch.from_numpy(rgb).permute(2, 0, 1).float().div(255.0)
    image = (image - BAND_MEAN) / BAND_STD
    model = load_model(args.weights, device)
    probs = predict_scene(model, image, args.tile, args.overlap, device)
    classes = probs.argmax(dim=0).to(torch.uint8).numpy()
    Image.fromarray(classes).save(args.out)
    share = np.bincount(classes.ravel(), minlength=N_CLASSES) / classes.size
    print("class shares:", " ".join(f"{s:.3f}" for s in share))


if __name__ == "__main__":
    main()
