import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torchvision import models, transforms


def image_paths(folder):
    return sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"})


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        net = models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
        self.stem = nn.Sequential(net.conv1, net.bn1, net.relu, net.maxpool)
        self.layer1, self.layer2, self.layer3 = net.layer1, net.layer2, net.layer3
        self.eval().requires_grad_(False)

    def forward(self, x):
        h1 = self.layer1(self.stem(x))
        h2 = self.layer2(h1)
        h3 = self.layer3(h2)
        size = h2.shape[-2:]
        stacked = torch.cat([F.adaptive_avg_pool2d(h1, size), h2,
                             F.interpolate(h3, size=size, mode="bilinear", align_corners=False)], dim=1)
        return stacked.mean(dim=(2, 3))


class GaussianFit:
    def __init__(self, dim):
        self.count = 0
        self.total = torch.zeros(dim, dtype=torch.float64)
        self.second = torch.zeros(dim, dim, dtype=torch.float64)

    def add(self, feature):
        f = feature.double()
        self.count += 1
        self.total += f
        self.second += f.T * f

    def finish(self, shrink=0.01):
        mean = self.total / self.count
        cov = self.second / self.count - torch.outer(mean, mean)
        cov = cov + shrink * torch.eye(len(mean), dtype=cov.dtype)
        return mean, torch.linalg.inv(cov)


def batches(paths, tf, size):
    for i in range(0, len(paths), size):
        chunk = paths[i:i + size]
        yield chunk, torch.stack([tf(Image.open(p).convert("RGB")) for p in chunk])


def mahalanobis(features, mean, precision):
    d = features.double() - mean
    return torch.einsum("bi,ij,bj->b", d, precision, d).clamp_min(0).sqrt()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--good-train", default="data/casting/train/ok_front")
    parser.add_argument("--good-val", default="data/casting/val/ok_front")
    parser.add_argument("--test", default="data/casting/test")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--quantile", type=float, default=0.99)
    parser.add_argument("--out", default="casting_scores.json")
    args = parser.parse_args()

    tf = transforms.Compose([transforms.Resize((256, 256)), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    extractor = FeatureExtractor()
    fit = None
    with torch.no_grad():
        for _, x in batches(image_paths(args.good_train), tf, args.batch):
            for feature in extractor(x):
                fit = fit or GaussianFit(feature.numel())
                fit.add(feature)
        mean, precision = fit.finish()
        val_scores = torch.cat([mahalanobis(extractor(x), mean, precision)
                                for _, x in batches(image_paths(args.good_val), tf, args.batch)])
        threshold = torch.quantile(val_scores, args.quantile).item()
        results = {}
        for label in ("ok_front", "def_front"):
            for paths, x in batches(image_paths(Path(args.test, label)), tf, args.batch):
                for p, s in zip(paths, mahalanobis(extractor(x), mean, precision).tolist()):
                    results[f"{label}/{p.name}"] = {"label": label, "score": s, "flagged": s > threshold}
    flagged_bad = np.mean([r["flagged"] for r in results.values() if r["label"] == "def_front"])
    flagged_good = np.mean([r["flagged"] for r in results.values() if r["label"] == "ok_front"])
    print(f"threshold {threshold:.2f}: defect recall {flagged_bad:.3f}, false alarms {flagged_good:.3f}")
    Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
