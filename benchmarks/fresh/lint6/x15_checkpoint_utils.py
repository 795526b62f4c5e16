"""Checkpoint helpers shared by the team's training scripts (ckpt_utils.py).

Usage in a training script:
    model = prepare_model(build_model(cfg), device)
    ...
    save_checkpoint(run_dir / f"epoch_{epoch}.pt", model, optimizer, scheduler, epoch, cfg)
    start_epoch = resume(run_dir / "last.pt", model, optimizer, scheduler, device)
and in the evaluation / export scripts:
    model = load_for_eval(path, build_model, device)
"""

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn as nn


@dataclass
class TrainConfig:
    arch: str = "resnet50"
    num_classes: int = 1000
    lr: float = 0.1
    epochs: int = 90
    batch_size: int = 256
    tags: list = field(default_factory=list)


def prepare_model(model, device):
    """Move the model to the device and spread it over all visible GPUs."""
    model = model.to(device)
    if device.type == "cuda" and torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    return model


def save_checkpoint(path, model, optimizer, scheduler, epoch, cfg):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "config": cfg,
        "torch_rng": torch.get_rng_state(),
    }
    tmp = path.with_suffix(".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)
    shutil.copyfile(path, path.parent / "last.pt")


def resume(path, model, optimizer, scheduler, device):
    """Restore a run in place; returns the epoch to start from (0 when there is nothing to resume)."""
    if not Path(path).exists():
        return 0
    ckpt = torch.load(path, map_location=device)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["torch_rng"])
    print(f"resumed from {path} (epoch {ckpt['epoch']}, arch {ckpt['config'].arch})")
    return ckpt["epoch"] + 1


def load_for_eval(path, build_model, device):
    """Rebuild the model from the config stored in the checkpoint, for evaluation on one device."""
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    model = build_model(ckpt["config"])
    model.load_state_dict(ckpt["model"])
    return model.to(device).eval()


def export_weights(path, out_path):
    """Strip optimizer and scheduler state: a small weights-only file for the model registry."""
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    torch.save(ckpt["model"], out_path)
    return out_path


def count_parameters(model):
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return trainable, total


def keep_last(run_dir, n=3):
    """Delete all but the n most recent epoch checkpoints."""
    ckpts = sorted(Path(run_dir).glob("epoch_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    for old in ckpts[:-n]:
        old.unlink()
