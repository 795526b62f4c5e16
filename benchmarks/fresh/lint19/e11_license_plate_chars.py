import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class GlyphCrops(Dataset):
    def __init__(self, root, rows):
        self.root, self.rows = Path(root), rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        img = Image.open(self.root / row["crop"]).convert("L").resize((24, 40))
        x = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0)[None]
        x = (x - 0.5) / 0.25
        return x, int(row["label_id"]) - 1


class GlyphNet(nn.Module):
    def __init__(self, n_classes=len(ALPHABET)):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((2, 1)),
        )
        self.head = nn.Linear(256, n_classes)

    def forward(self, x):
        return self.head(torch.flatten(self.body(x), 1))


@torch.no_grad()
def decode_plate(model, glyphs):
    probs = F.softmax(model(glyphs), dim=1)
    conf, idx = probs.max(dim=1)
    return "".join(ALPHABET[i] for i in idx.tolist()), conf.min().item()


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/plates")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    torch.manual_seed(4)
    root = Path(args.root)
    train_dl = DataLoader(GlyphCrops(root, read_rows(root / "train.csv")), batch_size=256, shuffle=True)
    val_dl = DataLoader(GlyphCrops(root, read_rows(root / "val.csv")), batch_size=512)
    model = GlyphNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for x, y in val_dl:
                correct += (model(x).argmax(dim=1) == y).sum().item()
                total += y.numel()
        print(f"epoch {epoch} glyph accuracy {correct / total:.4f}")

    plate = torch.stack([GlyphCrops(root, read_rows(root / "demo.csv"))[i][0] for i in range(7)])
    text, worst = decode_plate(model, plate)
    print(f"demo plate: {text} (lowest glyph confidence {worst:.2f})")
    torch.save(model.state_dict(), root / "glyph_net.pt")


if __name__ == "__main__":
    main()
