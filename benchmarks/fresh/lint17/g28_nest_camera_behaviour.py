"""Classify parent-bird behaviour (feeding, brooding, absent, nest building) in nest-box camera
clips. The firmware also stores a per-frame motion flag (a boolean array), which is used to
weight frames when pooling over time.
"""
import argparse
import logging
import random
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("nestcam")
CLIP_DIMS = ("batch", "channel", "time", "height", "width")


def describe(tensor: torch.Tensor, dims=CLIP_DIMS) -> str:
    parts = [f"{name}={size}" for name, size in zip(dims, tensor.shape)]
    return f"{tensor.dtype} [{', '.join(parts)}] on {tensor.device}"


class NestClips(Dataset):
    def __init__(self, root: Path, classes: List[str], frames: int):
        self.items = [(p, classes.index(p.parent.name)) for p in sorted(root.glob("*/*.npz"))]
        self.frames = frames

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        d = np.load(path)
        video, motion = d["frames"][: self.frames], d["motion"][: self.frames]
        clip = torch.from_numpy(video.astype(np.float32) / 255.0).unsqueeze(0)
        clip = (clip - clip.mean()) / (clip.std() + 1e-6)
        weight = torch.as_tensor(motion, dtype=torch.float32)
        return clip, weight, label


class FrameEncoder(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, width, 5, stride=2, padding=2, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(inplace=True),
        )
        self.out_dim = 2 * width

    def forward(self, frames):
        return self.net(frames).mean(dim=(2, 3))


class BehaviourNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.frames = FrameEncoder()
        self.fc = nn.Linear(self.frames.out_dim, n_classes)

    def forward(self, clip, weight):
        b, c, t, h, w = clip.shape
        per_frame = self.frames(clip.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)).view(b, t, -1)
        weight = weight + 0.1
        pooled = (per_frame * weight.unsqueeze(-1)).sum(1) / weight.sum(1, keepdim=True)
        return self.fc(pooled)


class Hooks:
    def __init__(self):
        self.fns: Dict[str, List[Callable[..., Any]]] = {}

    def on(self, event: str, fn: Callable[..., Any]) -> None:
        self.fns.setdefault(event, []).append(fn)

    def fire(self, event: str, **kw: Any) -> None:
        for fn in self.fns.get(event, []):
            fn(**kw)


def run_epoch(model, loader, device, hooks, optimizer=None):
    correct = total = 0
    for step, (clip, weight, label) in enumerate(loader):
        clip, weight, label = clip.to(device), weight.to(device), label.to(device)
        if step == 0:
            hooks.fire("first_batch", clip=clip)
        logits = model(clip, weight)
        if optimizer is not None:
            loss = F.cross_entropy(logits, label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        correct += (logits.argmax(dim=1) == label).sum().item()
        total += len(label)
    return correct / max(total, 1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/nestcam")
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="runs/nestcam/behaviour.pt")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO)

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    root = Path(args.root)
    classes = sorted(p.name for p in (root / "train").iterdir() if p.is_dir())
    train_dl = DataLoader(NestClips(root / "train", classes, args.frames), batch_size=8, shuffle=True, drop_last=True)
    valid_dl = DataLoader(NestClips(root / "valid", classes, args.frames), batch_size=8)
    model = BehaviourNet(len(classes)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    hooks = Hooks()
    hooks.on("first_batch", lambda clip: log.info("clip batch %s", describe(clip)))
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        train_acc = run_epoch(model, train_dl, device, hooks, optimizer)
        model.eval()
        with torch.no_grad():
            valid_acc = run_epoch(model, valid_dl, device, hooks)
        log.info("epoch %d train acc %.3f valid acc %.3f", epoch, train_acc, valid_acc)
        if valid_acc > best:
            best = valid_acc
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "classes": classes}, args.out)


if __name__ == "__main__":
    main()
