import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = np.array([0.43, 0.44, 0.45], dtype=np.float32)
STD = np.array([0.24, 0.24, 0.25], dtype=np.float32)


class VehicleCrops(Dataset):
    def __init__(self, root, items):
        self.root, self.items = Path(root), items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, vid = self.items[i]
        img = Image.open(self.root / path).convert("RGB").resize((128, 128))
        x = (np.asarray(img, dtype=np.float32) / 255.0 - MEAN) / STD
        return torch.from_numpy(x).permute(2, 0, 1), vid


class Embedder(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        chans = [3, 32, 64, 128, 256]
        layers = []
        for a, b in zip(chans, chans[1:]):
            layers += [nn.Conv2d(a, b, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.proj = nn.Linear(chans[-1], dim)

    def forward(self, x):
        return F.normalize(self.proj(self.body(x).mean(dim=(2, 3))), dim=1)


class CosineMarginHead(nn.Module):
    def __init__(self, dim, n_ids, scale=30.0, margin=0.35):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_ids, dim) * 0.01)
        self.scale, self.margin = scale, margin

    def forward(self, emb, ids):
        cos = emb @ F.normalize(self.weight, dim=1).t()
        cos = cos - self.margin * F.one_hot(ids, cos.size(1))
        return self.scale * cos


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/vehicle_reid")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr-backbone", type=float, default=3e-4)
    ap.add_argument("--lr-head", type=float, default=3e-3)
    args = ap.parse_args()

    torch.manual_seed(23)
    meta = json.loads((Path(args.root) / "train_index.json").read_text())
    items = [(m["crop"], m["vehicle_id"]) for m in meta]
    n_ids = 1 + max(vid for _, vid in items)
    loader = DataLoader(VehicleCrops(args.root, items), batch_size=64, shuffle=True, num_workers=4, drop_last=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    embedder = Embedder().to(device)
    head = CosineMarginHead(256, n_ids).to(device)
    backbone_opt = torch.optim.Adam(embedder.parameters(), lr=args.lr_backbone)
    head_opt = torch.optim.SGD(head.parameters(), lr=args.lr_head, momentum=0.9)

    for epoch in range(args.epochs):
        embedder.train()
        total = correct = seen = 0
        for x, vid in loader:
            x, vid = x.to(device), vid.to(device)
            head_opt.zero_grad()
            logits = head(embedder(x), vid)
            loss = F.cross_entropy(logits, vid)
            loss.backward()
            backbone_opt.step()
            head_opt.step()
            total += loss.item() * len(vid)
            correct += (logits.argmax(1) == vid).sum().item()
            seen += len(vid)
        print(f"epoch {epoch} loss {total / seen:.4f} train id accuracy {correct / seen:.3f}")
    torch.save(embedder.state_dict(), Path(args.root) / "vehicle_embedder.pt")


if __name__ == "__main__":
    main()
