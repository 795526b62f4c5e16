"""Garment category classifier for a fashion catalogue, written to survive spot-instance preemption.

Checkpoints are written every N steps; a restarted job picks up the newest one. The learning
rate follows a linear warm-up then cosine decay, stepped once per optimizer step.
"""
import argparse
import math
import random
from pathlib import Path
from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Any, Callable
from torch.utils.data import DataLoader, TensorDataset


class CallbackList:
    def __init__(self):
        self.callbacks: List[Callable[[int, Dict[str, float]], Any]] = []

    def add(self, fn: Callable[[int, Dict[str, float]], Any]) -> None:
        self.callbacks.append(fn)

    def __call__(self, step: int, logs: Dict[str, float]) -> None:
        for fn in self.callbacks:
            fn(step, logs)


def warmup_cosine(warmup, total):
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return factor


class SmallResNet(nn.Module):
    def __init__(self, n_classes, width=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(width, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                                   nn.Conv2d(width, width, 3, padding=1, bias=False), nn.BatchNorm2d(width))
        self.head = nn.Linear(width, n_classes)

    def forward(self, x):
        h = self.stem(x)
        h = F.relu(h + self.block(h))
        return self.head(h.mean(dim=(2, 3)))


def save_checkpoint(path, model, optimizer, scheduler, step):
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": step}, tmp)
    tmp.replace(path)


def resume(path, model, optimizer):
    if not path.exists():
        return 0
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["step"]


def load_catalogue(path):
    data = np.load(path)
    x = torch.from_numpy(data["images"]).permute(0, 3, 1, 2).float().div(255.0)
    mean = x.mean(dim=(0, 2, 3), keepdim=True)
    std = x.std(dim=(0, 2, 3), keepdim=True)
    return (x - mean) / std, torch.from_numpy(data["category"]).long()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/garments_64px.npz")
    ap.add_argument("--ckpt", default="/mnt/ckpt/garments/latest.pt")
    ap.add_argument("--total-steps", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--save-every", type=int, default=500)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args(argv)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, y = load_catalogue(args.data)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = SmallResNet(int(y.max()) + 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(args.warmup, args.total_steps))
    ckpt_path = Path(args.ckpt)
    ckpt_path.parent.mkdir(parents=True, exist_ok=True)
    step = resume(ckpt_path, model, optimizer)

    callbacks = CallbackList()
    callbacks.add(lambda s, logs: print(f"step {s}: " + " ".join(f"{k} {v:.4g}" for k, v in logs.items()))
                  if s % 100 == 0 else None)
    model.train()
    while step < args.total_steps:
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            callbacks(step, {"loss": loss.item(), "lr": scheduler.get_last_lr()[0]})
            if step % args.save_every == 0:
                save_checkpoint(ckpt_path, model, optimizer, scheduler, step)
            if step >= args.total_steps:
                break
    save_checkpoint(ckpt_path, model, optimizer, scheduler, step)


if __name__ == "__main__":
    main()
