"""Isolated sign recognition from pose keypoints with a bidirectional GRU; resumable on preemption."""
import argparse
import glob
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

NUM_JOINTS = 75


class KeypointClips(Dataset):
    def __init__(self, folder, frames=64, train=True):
        self.files = sorted(glob.glob(os.path.join(folder, "*.npz")))
        self.frames, self.train = frames, train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        d = np.load(self.files[i])
        kp = torch.from_numpy(d["keypoints"].astype(np.float32))
        idx = torch.linspace(0, kp.shape[0] - 1, self.frames).round().long()
        kp = kp[idx]
        center = kp[:, :1, :2]
        scale = (kp[..., :2].amax(dim=(0, 1)) - kp[..., :2].amin(dim=(0, 1))).max().clamp_min(1e-3)
        xy = (kp[..., :2] - center) / scale
        if self.train:
            xy = xy * (1 + 0.1 * torch.randn(1, 1, 2)) + 0.02 * torch.randn_like(xy)
        feats = torch.cat([xy, kp[..., 2:3]], dim=-1)
        return feats.flatten(1), int(d["label"])


class SignGRU(nn.Module):
    def __init__(self, num_classes, hidden=256):
        super().__init__()
        self.inp = nn.Sequential(nn.Linear(NUM_JOINTS * 3, hidden), nn.LayerNorm(hidden), nn.GELU())
        self.gru = nn.GRU(hidden, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.2)
        self.head = nn.Linear(2 * hidden, num_classes)

    def forward(self, x):
        out, _ = self.gru(self.inp(x))
        return self.head(out.mean(dim=1))


def save_checkpoint(path, model, optimizer, scheduler, epoch, best):
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch, "best": best}, tmp)
    os.replace(tmp, path)


def try_resume(path, model, optimizer, scheduler):
    if not os.path.exists(path):
        return 0, 0.0
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    scheduler.load_state_dict(ckpt["scheduler"])
    print(f"resumed from epoch {ckpt['epoch']}")
    return ckpt["epoch"] + 1, ckpt["best"]


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = n = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
        n += y.numel()
    return correct / max(n, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/wlasl/train")
    ap.add_argument("--val", default="data/wlasl/val")
    ap.add_argument("--classes", type=int, default=300)
    ap.add_argument("--epochs", type=int, default=80)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--ckpt", default="checkpoints/sign_gru_last.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    train_dl = DataLoader(KeypointClips(args.train), batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(KeypointClips(args.val, train=False), batch_size=args.batch_size)
    model = SignGRU(args.classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs, eta_min=1e-5)
    os.makedirs(os.path.dirname(args.ckpt) or ".", exist_ok=True)
    start_epoch, best = try_resume(args.ckpt, model, optimizer, scheduler)

    for epoch in range(start_epoch, args.epochs):
        model.train()
        total, n = 0.0, 0
        for x, y in train_dl:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item() * y.numel()
            n += y.numel()
        scheduler.step()
        acc = evaluate(model, val_dl)
        best = max(best, acc)
        print(f"epoch {epoch}: loss {total / max(n, 1):.4f}  val top-1 {acc:.3f}  best {best:.3f}")
        save_checkpoint(args.ckpt, model, optimizer, scheduler, epoch, best)


if __name__ == "__main__":
    main()
