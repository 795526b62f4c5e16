import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class InsulatorCrops(Dataset):
    def __init__(self, root, entries, train):
        self.root, self.entries, self.train = Path(root), entries, train

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, i):
        e = self.entries[i]
        img = Image.open(self.root / e["image"]).convert("RGB").resize((160, 160))
        arr = (np.asarray(img, dtype=np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD
        x = torch.from_numpy(arr).permute(2, 0, 1)
        if self.train and torch.rand(()) < 0.5:
            x = x.flip(2)
        return x, torch.tensor(float(e["defective"]))


class DefectScorer(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        blocks, cin = [], 3
        for k in range(4):
            cout = width * 2 ** k
            blocks += [nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
            cin = cout
        self.backbone = nn.Sequential(*blocks)
        self.classifier = nn.Linear(cin, 1)

    def forward(self, x):
        f = self.backbone(x).mean(dim=(2, 3))
        return self.classifier(f).squeeze(1).sigmoid()


def compute_loss(scores, target, pos_weight):
    return F.binary_cross_entropy_with_logits(scores, target, pos_weight=pos_weight)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/insulators")
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--threshold", type=float, default=0.5)
    args = ap.parse_args()

    torch.manual_seed(8)
    split = json.loads((Path(args.root) / "split.json").read_text())
    train_ds = InsulatorCrops(args.root, split["train"], train=True)
    val_ds = InsulatorCrops(args.root, split["val"], train=False)
    n_pos = sum(e["defective"] for e in split["train"])
    pos_weight = torch.tensor((len(split["train"]) - n_pos) / max(n_pos, 1))
    train_dl = DataLoader(train_ds, batch_size=32, shuffle=True, num_workers=4)
    val_dl = DataLoader(val_ds, batch_size=64, num_workers=4)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = DefectScorer().to(device)
    pos_weight = pos_weight.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            loss = compute_loss(model(x), y, pos_weight)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        tp = fp = fn = 0
        with torch.no_grad():
            for x, y in val_dl:
                pred = (model(x.to(device)) > args.threshold).float().cpu()
                tp += (pred * y).sum().item()
                fp += (pred * (1 - y)).sum().item()
                fn += ((1 - pred) * y).sum().item()
        print(f"epoch {epoch} precision {tp / max(tp + fp, 1):.3f} recall {tp / max(tp + fn, 1):.3f}")
    torch.save(model.state_dict(), Path(args.root) / "defect_scorer.pt")


if __name__ == "__main__":
    main()
