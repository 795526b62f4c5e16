"""Evaluate a face-embedding checkpoint on a verification protocol (LFW / CFP-FP style pairs).

The checkpoint comes from the multi-GPU ArcFace training job. pairs.txt lists
`left_path right_path same` (same = 1 for a genuine pair); images are aligned 112x112 crops.
Reports 10-fold accuracy and TAR at FAR = 1e-3.
"""
import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
from torch.utils.data import DataLoader, Dataset
from torchvision import models


class FaceCrops(Dataset):
    def __init__(self, root, paths):
        self.root, self.paths = Path(root), paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = Image.open(self.root / self.paths[i]).convert("RGB").resize((112, 112), Image.Resampling.BILINEAR)
        x = torch.from_numpy(np.asarray(img, dtype=np.float32)).permute(2, 0, 1)
        return (x - 127.5) / 128.0


def build_model(dim=512):
    net = models.resnet50(weights=None)
    net.fc = nn.Sequential(nn.Linear(2048, dim, bias=False), nn.BatchNorm1d(dim))
    return net


def load_weights(model, path):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    state = ckpt.get("backbone", ckpt)
    consume_prefix_in_state_dict_if_present(state, "module.")
    model.load_state_dict(state)
    return model


@torch.inference_mode()
def embed(model, loader, device):
    model.eval()
    out = []
    for x in loader:
        x = x.to(device)
        e = model(x) + model(torch.flip(x, dims=[3]))
        out.append(F.normalize(e, dim=1).cpu())
    return torch.cat(out)


def kfold_accuracy(scores, same, folds=10):
    idx = np.arange(len(scores))
    accs = []
    for k in range(folds):
        test = idx % folds == k
        thresholds = np.unique(scores[~test])
        train_acc = [((scores[~test] >= t) == same[~test]).mean() for t in thresholds[::max(1, len(thresholds) // 2000)]]
        best_t = thresholds[::max(1, len(thresholds) // 2000)][int(np.argmax(train_acc))]
        accs.append(((scores[test] >= best_t) == same[test]).mean())
    return float(np.mean(accs)), float(np.std(accs))


def tar_at_far(scores, same, far=1e-3):
    impostor = np.sort(scores[~same])[::-1]
    k = max(int(far * len(impostor)), 1)
    threshold = impostor[k - 1]
    return float((scores[same] > threshold).mean()), float(threshold)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True)
    ap.add_argument("--root", default="data/lfw_112")
    ap.add_argument("--pairs", default="data/lfw_112/pairs.txt")
    ap.add_argument("--batch-size", type=int, default=256)
    args = ap.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    pairs = [line.split() for line in Path(args.pairs).read_text().splitlines() if line.strip()]
    paths = sorted({p for a, b, _ in pairs for p in (a, b)})
    index = {p: i for i, p in enumerate(paths)}
    loader = DataLoader(FaceCrops(args.root, paths), batch_size=args.batch_size, num_workers=8)

    model = load_weights(build_model(), args.weights).to(device)
    emb = embed(model, loader, device)

    left = torch.tensor([index[a] for a, _, _ in pairs])
    right = torch.tensor([index[b] for _, b, _ in pairs])
    scores = (emb[left] * emb[right]).sum(dim=1).numpy()
    same = np.array([s == "1" for _, _, s in pairs])

    acc, acc_std = kfold_accuracy(scores, same)
    tar, thr = tar_at_far(scores, same)
    print(f"{len(pairs)} pairs, {len(paths)} images")
    print(f"10-fold accuracy {acc * 100:.2f} +- {acc_std * 100:.2f}")
    print(f"TAR@FAR=1e-3 {tar * 100:.2f} (threshold {thr:.3f})")


if __name__ == "__main__":
    main()
