"""Checkpoint helpers shared by the training and serving entry points of the image-retrieval project."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

import torch
import torch.nn as nn

from retrieval.models import build_model

log = logging.getLogger(__name__)


def wrap_for_devices(model: nn.Module) -> nn.Module:
    if torch.cuda.device_count() > 1:
        log.info("using %d GPUs", torch.cuda.device_count())
        model = nn.DataParallel(model)
    return model.cuda() if torch.cuda.is_available() else model


class CheckpointKeeper:
    def __init__(self, model: nn.Module, optimizer, scheduler, run_args: argparse.Namespace, folder: str | Path):
        self.model = wrap_for_devices(model)
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.run_args = run_args
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.best_metric = float("-inf")

    def save(self, epoch: int, metric: float) -> Path:
        payload = {
            "epoch": epoch,
            "metric": metric,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "args": self.run_args,
        }
        path = self.folder / f"epoch_{epoch:03d}.pt"
        tmp = path.with_suffix(".tmp")
        torch.save(payload, tmp)
        os.replace(tmp, path)
        if metric > self.best_metric:
            self.best_metric = metric
            best = self.folder / "best.pt"
            if best.exists() or best.is_symlink():
                best.unlink()
            best.symlink_to(path.name)
        return path

    def resume(self, path: str | Path) -> int:
        device = next(self.model.parameters()).device
        ckpt = torch.load(path, map_location=device)
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.scheduler.load_state_dict(ckpt["scheduler"])
        self.best_metric = ckpt["metric"]
        log.info("resumed from %s (epoch %d, metric %.4f)", path, ckpt["epoch"], ckpt["metric"])
        return ckpt["epoch"] + 1


def latest_checkpoint(folder: str | Path) -> Path | None:
    found = sorted(Path(folder).glob("epoch_*.pt"))
    return found[-1] if found else None


def export_weights(checkpoint: str | Path, out: str | Path) -> None:
    """Strip a training checkpoint down to the weights, for the serving image."""
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    weights = {k: v.half() if v.is_floating_point() else v for k, v in ckpt["model"].items()}
    torch.save({"arch": ckpt["args"].arch, "embed_dim": ckpt["args"].embed_dim, "weights": weights}, out)


def load_for_serving(path: str | Path, device: str = "cpu") -> nn.Module:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    model = build_model(blob["arch"], embed_dim=blob["embed_dim"])
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in blob["weights"].items()})
    return model.to(device).eval()
