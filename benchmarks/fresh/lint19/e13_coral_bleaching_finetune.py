import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

BLEACHING_LEVELS = ["healthy", "pale", "partially_bleached", "bleached", "dead"]
REEF_MEAN = [0.28, 0.47, 0.52]
REEF_STD = [0.17, 0.19, 0.21]


class ReefEncoder(nn.Module):
    def __init__(self, width=48):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 5, stride=2, padding=2, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.stage1 = nn.Sequential(nn.Conv2d(width, 2 * width, 3, stride=2, padding=1, bias=False),
                                    nn.BatchNorm2d(2 * width), nn.ReLU())
        self.stage2 = nn.Sequential(nn.Conv2d(2 * width, 4 * width, 3, stride=2, padding=1, bias=False),
                                    nn.BatchNorm2d(4 * width), nn.ReLU())
        self.out_dim = 4 * width

    def forward(self, x):
        return self.stage2(self.stage1(self.stem(x))).mean(dim=(2, 3))


class BleachingClassifier(nn.Module):
    def __init__(self, n_levels):
        super().__init__()
        self.backbone = ReefEncoder()
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(self.backbone.out_dim, n_levels))

    def forward(self, x):
        return self.head(self.backbone(x))


def load_pretrained(model, path):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    result = model.backbone.load_state_dict(ckpt, strict=False)
    print(f"loaded SimCLR encoder from {path} (epoch {ckpt.get('epoch', '?')}), "
          f"{len(result.missing_keys)} keys kept at init")
    return model


def tensors_from(path):
    d = np.load(path)
    images = torch.from_numpy(d["images"]).permute(0, 3, 1, 2).float().div(255)
    images = (images - torch.tensor(REEF_MEAN).view(1, 3, 1, 1)) / torch.tensor(REEF_STD).view(1, 3, 1, 1)
    return TensorDataset(images, torch.from_numpy(d["level"]).long())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", type=Path, default=Path("runs/reef_simclr/encoder_last.pt"))
    ap.add_argument("--data", type=Path, default=Path("data/coral_quadrats"))
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--lr-head", type=float, default=1e-3)
    ap.add_argument("--lr-backbone", type=float, default=1e-4)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = load_pretrained(BleachingClassifier(len(BLEACHING_LEVELS)), args.pretrained)
    train_dl = DataLoader(tensors_from(args.data / "train.npz"), batch_size=64, shuffle=True)
    val_dl = DataLoader(tensors_from(args.data / "val.npz"), batch_size=128)
    optimizer = torch.optim.Adam([
        {"params": model.backbone.parameters(), "lr": args.lr_backbone},
        {"params": model.head.parameters(), "lr": args.lr_head},
    ])

    for epoch in range(args.epochs):
        model.train()
        for x, y in train_dl:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            hits = sum((model(x).argmax(1) == y).sum().item() for x, y in val_dl)
        print(f"epoch {epoch} val accuracy {hits / len(val_dl.dataset):.3f}")
    torch.save(model.state_dict(), args.data / "bleaching_classifier.pt")


if __name__ == "__main__":
    main()
