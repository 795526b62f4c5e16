"""Small helpers shared by the tabular notebooks: tensors from data frames, standardisation,
evaluation, distillation from a gradient-boosting teacher's probabilities, and artifacts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn


def frame_to_tensors(df: pd.DataFrame, feature_cols, label_col=None):
    x = torch.as_tensor(df[feature_cols].to_numpy(dtype=np.float32))
    if label_col is None:
        return x
    y = torch.as_tensor(df[label_col].to_numpy(), dtype=torch.long)
    return x, y


class Standardizer:
    """Column-wise standardisation fitted on the training rows only."""

    def __init__(self, eps: float = 1e-6):
        self.eps = eps
        self.mean = self.std = None

    def fit(self, x: torch.Tensor) -> "Standardizer":
        flat = x.reshape(-1, x.shape[-1])
        self.mean, self.std = flat.mean(dim=0), flat.std(dim=0) + self.eps
        return self

    def transform(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std

    def state(self) -> dict:
        return {"mean": self.mean.tolist(), "std": self.std.tolist(), "eps": self.eps}


@torch.no_grad()
def predict_proba(model: nn.Module, x: torch.Tensor, batch_size: int = 4096) -> torch.Tensor:
    was_training = model.training
    model.eval()
    try:
        return torch.cat([model(chunk).softmax(dim=-1) for chunk in x.split(batch_size)])
    finally:
        model.train(was_training)


@torch.no_grad()
def dataset_loss(model: nn.Module, loader) -> float:
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for xb, yb in loader:
        total += F.cross_entropy(model(xb), yb, reduction="sum").item()
        count += yb.shape[0]
    model.train(was_training)
    return total / max(count, 1)


def distillation_loss(student_logits, teacher_probs, labels, alpha=0.5, temperature=2.0):
    """KL to the teacher's (already normalised) probabilities plus hard-label cross-entropy."""
    log_student = F.log_softmax(student_logits / temperature, dim=-1)
    soft = F.kl_div(log_student, teacher_probs, reduction="batchmean") * temperature ** 2
    return alpha * soft + (1 - alpha) * F.cross_entropy(student_logits, labels)


def class_weights(y: torch.Tensor, n_classes: int) -> torch.Tensor:
    counts = torch.bincount(y, minlength=n_classes).float()
    return counts.sum() / (n_classes * counts.clamp(min=1))


def save_artifacts(path, model, scaler: Standardizer, feature_cols, metrics: dict):
    torch.save({
        "model": model.state_dict(),
        "scaler": scaler.state(),
        "features": list(feature_cols),
        "metrics": {k: float(np.asarray(v).mean()) for k, v in metrics.items()},
    }, path)


def load_artifacts(path, model):
    blob = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(blob["model"])
    scaler = Standardizer(blob["scaler"]["eps"])
    scaler.mean = torch.tensor(blob["scaler"]["mean"])
    scaler.std = torch.tensor(blob["scaler"]["std"])
    return model, scaler, blob["features"], blob["metrics"]
