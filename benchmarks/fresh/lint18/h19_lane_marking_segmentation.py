import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class LaneFrames(Dataset):
    def __init__(self, root, split, size=(288, 800)):
        self.frames = sorted((Path(root) / split / "frames").glob("*.jpg"))
        self.masks = [Path(root) / split / "masks" / (f.stem + ".png") for f in self.frames]
        self.size = size

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, i):
        h, w = self.size
        img = Image.open(self.frames[i]).convert("RGB").resize((w, h), Image.BILINEAR)
        mask = Image.open(self.masks[i]).resize((w, h), Image.NEAREST)
        img = torch.from_numpy(np.asarray(img, dtype=np.float32) / 255.0).permute(2, 0, 1)
        return {"image": (img - 0.45) / 0.25, "mask": torch.from_numpy(np.asarray(mask, dtype=np.int64))}


def down(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class LaneNet(nn.Module):
    def __init__(self, n_lanes=4):
        super().__init__()
        self.encoder = nn.Sequential(down(3, 32), down(32, 64), down(64, 128), down(128, 128))
        self.context = nn.Conv2d(128, 128, 3, padding=4, dilation=4)
        self.head = nn.Conv2d(128, n_lanes + 1, 1)

    def forward(self, x):
        logits = self.head(F.relu(self.context(self.encoder(x))))
        return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)


def to_device(batch, device):
    for key in ("image", "mask"):
        batch[key].to(device, non_blocking=True)
    return batch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="data/culane_subset")
    p.add_argument("--epochs", type=int, default=24)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--ckpt", default="checkpoints/lanenet_last.pt")
    p.add_argument("--resume", action="store_true")
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train = DataLoader(LaneFrames(args.root, "train"), batch_size=16, shuffle=True, num_workers=6,
                       pin_memory=True, drop_last=True)
    model = LaneNet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    class_weights = torch.tensor([0.4, 1.0, 1.0, 1.0, 1.0], device=device)
    start_epoch = 0
    if args.resume and Path(args.ckpt).exists():
        ckpt = torch.load(args.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        start_epoch = ckpt["epoch"] + 1

    for epoch in range(start_epoch, args.epochs):
        model.train()
        running, seen = 0.0, 0
        for batch in train:
            batch = to_device(batch, device)
            logits = model(batch["image"])
            loss = F.cross_entropy(logits, batch["mask"], weight=class_weights)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item() * len(logits)
            seen += len(logits)
        print(f"epoch {epoch}: loss {running / seen:.4f}")
        Path(args.ckpt).parent.mkdir(parents=True, exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch}, args.ckpt)


if __name__ == "__main__":
    main()
