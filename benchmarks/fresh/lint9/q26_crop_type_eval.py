"""Evaluate a trained crop-type classifier on held-out field parcels (Sentinel-2 L2A time series).

Each parcel: up to 64 cloud-free acquisitions x 13 bands (mean reflectance over the parcel),
with an observation mask for the missing dates. Writes per-class metrics and a confusion matrix.
"""
import argparse
import json
import math

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import classification_report, cohen_kappa_score, confusion_matrix
from torch.utils.data import DataLoader, TensorDataset

CROPS = ["wheat", "barley", "maize", "rapeseed", "sunflower", "potato", "meadow", "sugar_beet", "orchard"]


class ParcelTransformer(nn.Module):
    def __init__(self, bands=13, d=128, heads=4, layers=3, n_classes=9, max_len=64):
        super().__init__()
        self.inp = nn.Sequential(nn.LayerNorm(bands), nn.Linear(bands, d))
        self.register_buffer("pos", self._sinusoid(max_len, d), persistent=False)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, n_classes)
        self.apply(self._init)

    @staticmethod
    def _sinusoid(n, d):
        pos = torch.arange(n, dtype=torch.float32)[:, None]
        div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
        pe = torch.zeros(n, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        return pe

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)

    def forward(self, x, observed):
        h = self.inp(x) + self.pos[: x.size(1)]
        h = self.encoder(h, src_key_padding_mask=~observed)
        w = observed.unsqueeze(-1).to(h.dtype)
        pooled = (h * w).sum(1) / w.sum(1).clamp(min=1.0)
        return self.head(pooled)


def load_model(path, device):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model = ParcelTransformer(**ckpt["hparams"])
    model.load_state_dict(ckpt["model"])
    return model.to(device).eval()


def load_parcels(path, stats_path):
    d = np.load(path)
    with open(stats_path) as f:
        stats = json.load(f)
    x = (d["x"].astype(np.float32) - np.array(stats["mean"], np.float32)) / np.array(stats["std"], np.float32)
    observed = d["mask"].astype(bool)
    x[~observed] = 0.0
    return TensorDataset(torch.from_numpy(x), torch.from_numpy(observed), torch.from_numpy(d["y"].astype(np.int64)))


@torch.inference_mode()
def predict(model, loader, device):
    preds, probs, labels = [], [], []
    for x, observed, y in loader:
        logits = model(x.to(device), observed.to(device))
        p = logits.softmax(dim=1)
        probs.append(p.cpu())
        preds.append(p.argmax(dim=1).cpu())
        labels.append(y)
    return torch.cat(preds).numpy(), torch.cat(probs).numpy(), torch.cat(labels).numpy()


def expected_calibration_error(probs, labels, bins=15):
    conf, pred = probs.max(1), probs.argmax(1)
    edges = np.linspace(0.0, 1.0, bins + 1)
    ece = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (conf > lo) & (conf <= hi)
        if sel.any():
            ece += sel.mean() * abs((pred[sel] == labels[sel]).mean() - conf[sel].mean())
    return float(ece)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="runs/parcel_transformer/best.pt")
    ap.add_argument("--data", default="data/parcels/test_2019.npz")
    ap.add_argument("--stats", default="data/parcels/train_band_stats.json")
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--out", default="runs/parcel_transformer/test_metrics.json")
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_model(args.ckpt, device)
    loader = DataLoader(load_parcels(args.data, args.stats), batch_size=args.batch_size, shuffle=False)
    pred, probs, y = predict(model, loader, device)

    report = classification_report(y, pred, labels=list(range(len(CROPS))), target_names=CROPS,
                                   output_dict=True, zero_division=0)
    summary = {
        "overall_accuracy": float((pred == y).mean()),
        "kappa": float(cohen_kappa_score(y, pred)),
        "macro_f1": report["macro avg"]["f1-score"],
        "ece": expected_calibration_error(probs, y),
        "per_class": {c: report[c] for c in CROPS},
        "confusion": confusion_matrix(y, pred, labels=list(range(len(CROPS)))).tolist(),
    }
    print(f"OA {summary['overall_accuracy']:.4f}  kappa {summary['kappa']:.4f}  "
          f"macro-F1 {summary['macro_f1']:.4f}  ECE {summary['ece']:.4f}")
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
