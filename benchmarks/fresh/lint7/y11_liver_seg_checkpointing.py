"""2D liver segmentation on CT slices (LiTS, windowed to [-100, 250] HU), with full resume.

The encoder starts from a self-supervised checkpoint that holds only encoder weights;
the decoder is trained from scratch. Checkpoints hold everything needed to resume exactly.
"""
import argparse
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class SmallUNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256)):
        super().__init__()
        self.encoder = nn.ModuleList()
        c = 1
        for w in widths:
            self.encoder.append(nn.Sequential(conv_bn(c, w), conv_bn(w, w)))
            c = w
        self.decoder = nn.ModuleList()
        for w_skip, w in zip(widths[-2::-1], widths[:0:-1]):
            self.decoder.append(nn.Sequential(conv_bn(w + w_skip, w_skip), conv_bn(w_skip, w_skip)))
        self.head = nn.Conv2d(widths[0], 1, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.encoder):
            x = block(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        for block, skip in zip(self.decoder, reversed(skips[:-1])):
            x = F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
            x = block(torch.cat([x, skip], dim=1))
        return self.head(x)


class CTSlices(Dataset):
    def __init__(self, npz_path):
        data = np.load(npz_path)
        self.images = data["images"]
        self.masks = data["masks"]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = (np.clip(self.images[i], -100, 250) + 100) / 350.0
        return torch.from_numpy(img[None].astype(np.float32)), torch.from_numpy(self.masks[i][None].astype(np.float32))


def dice_bce(logits, target, eps=1.0):
    bce = F.binary_cross_entropy_with_logits(logits, target)
    prob = torch.sigmoid(logits)
    inter = (prob * target).sum(dim=(1, 2, 3))
    dice = (2 * inter + eps) / (prob.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps)
    return bce + (1 - dice).mean()


def load_pretrained_encoder(model, path):
    state = torch.load(path, map_location="cpu", weights_only=True)
    result = model.load_state_dict(state, strict=False)
    not_decoder = [k for k in result.missing_keys if not k.startswith(("decoder.", "head."))]
    if result.unexpected_keys or not_decoder:
        raise RuntimeError(f"encoder checkpoint mismatch: missing={not_decoder} unexpected={result.unexpected_keys}")
    print(f"loaded {len(state)} encoder tensors; {len(result.missing_keys)} decoder tensors left at init")


@torch.no_grad()
def val_dice(model, loader, device):
    model.eval()
    inter = denom = 0.0
    for x, y in loader:
        pred = (model(x.to(device)) > 0).float()
        y = y.to(device)
        inter += (pred * y).sum().item()
        denom += (pred.sum() + y.sum()).item()
    return 2 * inter / max(denom, 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/lits_train_slices.npz")
    ap.add_argument("--val", default="data/lits_val_slices.npz")
    ap.add_argument("--encoder", default="weights/ssl_encoder.pt")
    ap.add_argument("--ckpt-dir", default="ckpt/liver_unet")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SmallUNet()
    load_pretrained_encoder(model, args.encoder)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.amp.GradScaler("cuda", enabled=device.type == "cuda")

    os.makedirs(args.ckpt_dir, exist_ok=True)
    last_path = os.path.join(args.ckpt_dir, "last.pt")
    start, best, best_state = 0, 0.0, None
    if args.resume and os.path.exists(last_path):
        ckpt = torch.load(last_path, map_location=device, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        start, best = ckpt["epoch"] + 1, ckpt["best"]

    train_dl = DataLoader(CTSlices(args.train), batch_size=16, shuffle=True, num_workers=4, drop_last=True)
    val_dl = DataLoader(CTSlices(args.val), batch_size=32, num_workers=4)
    for epoch in range(start, args.epochs):
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=device.type == "cuda"):
                loss = dice_bce(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        scheduler.step()
        dice = val_dice(model, val_dl, device)
        if dice > best:
            best, best_state = dice, copy.deepcopy(model.state_dict())
            torch.save(best_state, os.path.join(args.ckpt_dir, "best.pt"))
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(),
                    "epoch": epoch, "best": best}, last_path)
        print(f"epoch {epoch:03d} val dice {dice:.4f} (best {best:.4f})")


if __name__ == "__main__":
    main()
