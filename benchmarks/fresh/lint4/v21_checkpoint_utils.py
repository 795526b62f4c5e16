"""Checkpoint helpers shared by the training scripts of this repository.

save_checkpoint / load_checkpoint  - full training state, for exact resumption
export_for_inference / load_exported - the artifact the serving team picks up
"""

from __future__ import annotations

import logging
import os
import random
import tempfile
from pathlib import Path

import numpy as np
import torch

log = logging.getLogger(__name__)


def _atomic_save(obj, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def rng_snapshot() -> dict:
    snap = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        snap["cuda"] = torch.cuda.get_rng_state_all()
    return snap


def restore_rng(snap: dict) -> None:
    random.setstate(snap["python"])
    np.random.set_state(snap["numpy"])
    torch.set_rng_state(snap["torch"])
    if "cuda" in snap and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(snap["cuda"])


def save_checkpoint(path, *, model, optimizer, scheduler=None, scaler=None, epoch, best_metric):
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "scaler": scaler.state_dict() if scaler is not None else None,
        "epoch": int(epoch),
        "best_metric": float(best_metric),
        "rng": rng_snapshot(),
    }
    _atomic_save(state, Path(path))
    log.info("saved checkpoint %s (epoch %d)", path, epoch)


def load_checkpoint(path, *, model, optimizer=None, scheduler=None, scaler=None, device="cpu"):
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None and state.get("scheduler") is not None:
        scheduler.load_state_dict(state["scheduler"])
    if scaler is not None and state.get("scaler") is not None:
        scaler.load_state_dict(state["scaler"])
    restore_rng(state["rng"])
    log.info("resumed from %s at epoch %d", path, state["epoch"])
    return state["epoch"] + 1, state["best_metric"]


def export_for_inference(model: torch.nn.Module, path, example_input=None) -> None:
    model = model.eval().cpu()
    if example_input is not None:
        with torch.no_grad():
            model(example_input)
    _atomic_save(model, Path(path))
    log.info("exported %s for serving", path)


def load_exported(path, device="cpu") -> torch.nn.Module:
    model = torch.load(path, map_location=device, weights_only=False)
    return model.eval()


def average_checkpoints(paths, device="cpu") -> dict:
    """Uniform average of the model weights stored in several checkpoints (float tensors only)."""
    avg = None
    for p in paths:
        sd = torch.load(p, map_location=device, weights_only=True)["model"]
        if avg is None:
            avg = {k: v.clone().double() if v.is_floating_point() else v.clone() for k, v in sd.items()}
        else:
            for k, v in sd.items():
                if v.is_floating_point():
                    avg[k] += v.double()
    return {k: (v / len(paths)).to(sd[k].dtype) if v.is_floating_point() else v for k, v in avg.items()}
