import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms as T

N_TEETH = 32


class Panoramics(Dataset):
    def __init__(self, root, split, size=(256, 512), train=False):
        self.images = sorted((Path(root) / split / "images").glob("*.png"))
        self.masks = Path(root) / split / "masks"
        self.size, self.train = size, train
        self.geometric = T.Compose([T.RandomHorizontalFlip(), T.RandomAffine(degrees=7, translate=(0.05, 0.05))])

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        image = Image.open(self.images[i]).convert("L").resize(self.size[::-1], Image.BILINEAR)
        mask = Image.open(self.masks / self.images[i].name).resize(self.size[::-1], Image.NEAREST)
        image = torch.from_numpy(np.asarray(image, dtype=np.float32) / 255.0)[None]
        mask = torch.from_numpy(np.asarray(mask, dtype=np.int64))[None]
        if self.train:
            image = self.geometric(image)
            mask = self.geometric(mask)
        return (image - 0.42) / 0.24, mask[0]


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ToothUNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256)):
        super().__init__()
        self.downs = nn.ModuleList()
        cin = 1
        for w in widths:
            self.downs.append(nn.Sequential(conv_bn(cin, w), conv_bn(w, w)))
            cin = w
        self.ups = nn.ModuleList(nn.Sequential(conv_bn(a + b, b), conv_bn(b, b)) for a, b in zip(widths[:0:-1], widths[-2::-1]))
        self.out = nn.Conv2d(widths[0], N_TEETH + 1, 1)

    def forward(self, x):
        skips = []
        for i, down in enumerate(self.downs):
            x = down(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        for up, skip in zip(self.ups, reversed(skips[:-1])):
            x = up(torch.cat([F.interpolate(x, size=skip.shape[-2:], mode="nearest"), skip], dim=1))
        return self.out(x)


def dice_per_tooth(logits, mask):
    pred = logits.argmax(1)
    scores = []
    for t in range(1, N_TEETH + 1):
        inter = ((pred == t) & (mask == t)).sum().item()
        denom = (pred == t).sum().item() + (mask == t).sum().item()
        if denom:
            scores.append(2 * inter / denom)
    return scores


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/panoramic_xrays")
    p.add_argument("--epochs", type=int, default=80)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = DataLoader(Panoramics(args.root, "train", train=True), batch_size=8, shuffle=True, num_workers=4, drop_last=True)
    val = DataLoader(Panoramics(args.root, "val"), batch_size=8, num_workers=4)
    model = ToothUNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        model.train()
        for image, mask in train:
            image, mask = image.to(device), mask.to(device)
            loss = F.cross_entropy(model(image), mask)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        scores = []
        with torch.no_grad():
            for image, mask in val:
                scores += dice_per_tooth(model(image.to(device)), mask.to(device))
        print(f"epoch {epoch}: loss {loss.item():.4f} mean tooth Dice {sum(scores) / max(len(scores), 1):.3f}")
    torch.save(model.state_dict(), "tooth_unet.pt")


if __name__ == "__main__":
    main()
