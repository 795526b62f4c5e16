"""Centre-point detector for products on supermarket shelf photos (one class: "facing").

The network predicts a centre heatmap and box sizes on a stride-4 grid. Its outputs travel
through the training and evaluation code as a small container class.
"""
import argparse
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils._pytree as pytree
from torch.utils.data import DataLoader, Dataset

STRIDE = 4


@dataclass
class DetOutput:
    heatmap: torch.Tensor
    sizes: torch.Tensor


pytree._register_pytree_node(
    DetOutput,
    lambda out: ([out.heatmap, out.sizes], None),
    lambda values, _: DetOutput(*values),
)


class ShelfImages(Dataset):
    def __init__(self, npz_path, split):
        data = np.load(npz_path, allow_pickle=False)
        self.images = data[f"{split}_images"]
        self.boxes = data[f"{split}_boxes"]
        self.counts = data[f"{split}_counts"]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = torch.from_numpy(self.images[i]).permute(2, 0, 1).float() / 255.0
        img = (img - 0.45) / 0.25
        h, w = img.shape[1] // STRIDE, img.shape[2] // STRIDE
        heat = torch.zeros(1, h, w)
        sizes = torch.zeros(2, h, w)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
        for x0, y0, x1, y1 in self.boxes[i][: self.counts[i]]:
            cx, cy = int((x0 + x1) / 2 / STRIDE), int((y0 + y1) / 2 / STRIDE)
            sigma = max((x1 - x0) / STRIDE / 6, 0.8)
            heat[0] = torch.maximum(heat[0], torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma ** 2)))
            sizes[:, cy, cx] = torch.tensor([(x1 - x0) / STRIDE, (y1 - y0) / STRIDE])
        return img, heat, sizes


class CentreNet(nn.Module):
    def __init__(self, width=48):
        super().__init__()
        def down(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.backbone = nn.Sequential(down(3, width), down(width, width), nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.heat_head = nn.Conv2d(width, 1, 1)
        self.size_head = nn.Conv2d(width, 2, 1)
        nn.init.constant_(self.heat_head.bias, -2.19)

    def forward(self, x):
        f = self.backbone(x)
        return DetOutput(self.heat_head(f), F.relu(self.size_head(f)))


def focal_loss(logits, target, alpha=2.0, beta=4.0):
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1).float()
    pos_loss = -((1 - p) ** alpha) * torch.log(p) * pos
    neg_loss = -((1 - target) ** beta) * (p ** alpha) * torch.log(1 - p) * (1 - pos)
    return (pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1.0)


def detection_loss(out, heat, sizes):
    centre = (heat == 1).float()
    size_loss = (F.l1_loss(out.sizes, sizes, reduction="none") * centre).sum() / centre.sum().clamp(min=1.0)
    return focal_loss(out.heatmap, heat) + 0.1 * size_loss


@torch.no_grad()
def count_error(model, loader, device, threshold=0.3):
    model.eval()
    errors = []
    for img, heat, _ in loader:
        out = pytree.tree_map(lambda t: t.float().cpu(), model(img.to(device)))
        prob = torch.sigmoid(out.heatmap)
        peaks = (prob == F.max_pool2d(prob, 3, 1, 1)) & (prob > threshold)
        errors.append((peaks.sum(dim=(1, 2, 3)) - (heat == 1).sum(dim=(1, 2, 3))).abs().float())
    return torch.cat(errors).mean().item()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/shelves.npz")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--out", default="runs/shelf/centrenet.pt")
    args = ap.parse_args(argv)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(ShelfImages(args.data, "train"), batch_size=args.batch_size, shuffle=True, drop_last=True)
    valid_dl = DataLoader(ShelfImages(args.data, "valid"), batch_size=args.batch_size)
    model = CentreNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for img, heat, sizes in train_dl:
            out = model(img.to(device))
            loss = detection_loss(out, heat.to(device), sizes.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f} valid count MAE {count_error(model, valid_dl, device):.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
