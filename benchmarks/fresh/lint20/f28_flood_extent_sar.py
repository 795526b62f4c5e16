import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SarChips(Dataset):
    def __init__(self, npz_path, augment):
        data = np.load(npz_path)
        self.vv_vh = torch.from_numpy(np.clip(data["sar_db"], -30.0, 5.0).astype(np.float32))
        self.water = torch.from_numpy(data["water"].astype(np.int64))
        self.augment = augment

    def __len__(self):
        return len(self.water)

    def __getitem__(self, i):
        x, y = (self.vv_vh[i] + 15.0) / 8.0, self.water[i]
        if self.augment:
            if torch.rand(()) < 0.5:
                x, y = x.flip(-1), y.flip(-1)
            k = int(torch.randint(0, 4, ()))
            x, y = torch.rot90(x, k, dims=(-2, -1)), torch.rot90(y, k, dims=(-2, -1))
        return x, y


class FloodNet(nn.Module):
    def __init__(self, base=24):
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(2, base, 3, padding=1), nn.ReLU(), nn.Conv2d(base, base, 3, padding=1), nn.ReLU())
        self.down2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(base, 2 * base, 3, padding=1), nn.ReLU(), nn.Dropout2d(0.1))
        self.up = nn.ConvTranspose2d(2 * base, base, 2, stride=2)
        self.fuse = nn.Sequential(nn.Conv2d(2 * base, base, 3, padding=1), nn.ReLU(), nn.Conv2d(base, 2, 1))

    def forward(self, x):
        d1 = self.down1(x)
        return self.fuse(torch.cat([self.up(self.down2(d1)), d1], dim=1))


def validate(model, loader, device):
    model.eval()
    loss_sum = inter = union = pixels = 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            pred = logits.argmax(dim=1)
            inter += ((pred == 1) & (y == 1)).sum().item()
            union += ((pred == 1) | (y == 1)).sum().item()
            pixels += y.numel()
    return loss_sum / pixels, inter / max(union, 1.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="sen1floods_train.npz")
    parser.add_argument("--val", default="sen1floods_val.npz")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--ckpt", default="floodnet_last.pt")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(SarChips(args.train, augment=True), batch_size=16, shuffle=True, num_workers=4)
    val_loader = DataLoader(SarChips(args.val, augment=False), batch_size=1)
    model = FloodNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=3)
    class_weight = torch.tensor([1.0, 3.0], device=device)
    start = 0
    if os.path.exists(args.ckpt):
        ckpt = torch.load(args.ckpt, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start = ckpt["epoch"] + 1
    for epoch in range(start, args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y, weight=class_weight)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss, iou = validate(model, val_loader, device)
        scheduler.step(iou)
        print(f"epoch {epoch}: val loss {val_loss:.4f} water IoU {iou:.3f}")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "epoch": epoch}, args.ckpt)


if __name__ == "__main__":
    main()
