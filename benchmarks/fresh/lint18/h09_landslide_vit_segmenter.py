import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

BANDS = 14


class LandslideTiles(Dataset):
    def __init__(self, root, split, stats):
        self.files = sorted((Path(root) / split).glob("*.npz"))
        self.mean, self.std = stats

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        tile = np.load(self.files[i])
        img = (tile["bands"].astype(np.float32) - self.mean[:, None, None]) / self.std[:, None, None]
        return torch.from_numpy(img), torch.from_numpy(tile["mask"].astype(np.int64))


class ViTSegmenter(nn.Module):
    def __init__(self, img_size=128, patch=8, dim=192, depth=6, heads=6, n_classes=2):
        super().__init__()
        self.patch, self.dim = patch, dim
        self.embed = nn.Conv2d(BANDS, dim, patch, stride=patch)
        self.pos = nn.Parameter(torch.randn(1, (img_size // patch) ** 2, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.decode = nn.Sequential(
            nn.Conv2d(dim, 64, 3, padding=1), nn.GELU(), nn.Conv2d(64, n_classes, 1),
        )

    def forward(self, x):
        b, _, h, w = x.shape
        gh, gw = h // self.patch, w // self.patch
        tokens = self.embed(x).flatten(2).transpose(1, 2) + self.pos
        tokens = self.norm(self.blocks(tokens))
        grid = tokens.reshape(b, self.dim, gh, gw)
        return F.interpolate(self.decode(grid), size=(h, w), mode="bilinear", align_corners=False)


def iou(logits, mask):
    pred = logits.argmax(dim=1)
    inter = ((pred == 1) & (mask == 1)).sum().item()
    union = ((pred == 1) | (mask == 1)).sum().item()
    return inter, union


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/landslide4sense")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--lr", type=float, default=5e-4)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    stats = np.load(Path(args.root) / "band_stats.npy")

    train = DataLoader(LandslideTiles(args.root, "train", stats), batch_size=16, shuffle=True, num_workers=4)
    val = DataLoader(LandslideTiles(args.root, "val", stats), batch_size=32, num_workers=4)
    model = ViTSegmenter().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    weights = torch.tensor([1.0, 5.0], device=device)

    for epoch in range(args.epochs):
        model.train()
        for img, mask in train:
            img, mask = img.to(device), mask.to(device)
            loss = F.cross_entropy(model(img), mask, weight=weights)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        model.eval()
        inter = union = 0
        with torch.no_grad():
            for img, mask in val:
                i, u = iou(model(img.to(device)), mask.to(device))
                inter, union = inter + i, union + u
        print(f"epoch {epoch}: last loss {loss.item():.4f}  val landslide IoU {inter / max(union, 1):.3f}")
    torch.save(model.state_dict(), "vit_landslide.pt")


if __name__ == "__main__":
    main()
