"""Unsupervised anomalous-sound detection for one machine type (DCASE task 2 style).

Log-mel spectrograms were precomputed per clip (<split>/<clip>.npy, shape (128, frames)); the
autoencoder reconstructs stacks of 5 consecutive frames and a clip's anomaly score is its mean
reconstruction error. Training sees normal clips only. The run can be interrupted and resumed.
"""
import copy
import glob
import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class AEConfig:
    train_glob: str = "data/dcase/fan/train/normal_*.npy"
    test_glob: str = "data/dcase/fan/test/*.npy"
    context: int = 5
    n_mels: int = 128
    bottleneck: int = 8
    epochs: int = 100
    batch: int = 512
    lr: float = 1e-3
    run_dir: str = "runs/ae_fan"


def stack_frames(logmel, context):
    frames = logmel.shape[1] - context + 1
    return np.stack([logmel[:, t: t + context].T.reshape(-1) for t in range(frames)]).astype(np.float32)


class DenseAE(nn.Module):
    def __init__(self, dim, bottleneck, width=128):
        super().__init__()
        def layer(a, b):
            return [nn.Linear(a, b, bias=False), nn.BatchNorm1d(b), nn.ReLU()]
        self.encoder = nn.Sequential(*layer(dim, width), *layer(width, width), *layer(width, bottleneck))
        self.decoder = nn.Sequential(*layer(bottleneck, width), *layer(width, width), nn.Linear(width, dim))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def save_checkpoint(path, model, optimizer, scheduler, epoch, best_loss, stats):
    tmp = path + ".partial"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch, "best_loss": float(best_loss),
                "mean": stats[0], "std": stats[1]}, tmp)
    os.replace(tmp, path)


def resume(path, model, optimizer, scheduler):
    if not os.path.exists(path):
        return 0, float("inf")
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    return state["epoch"] + 1, state["best_loss"]


@torch.no_grad()
def clip_scores(model, files, cfg, mean, std):
    model.eval()
    scores = []
    for f in files:
        x = (torch.from_numpy(stack_frames(np.load(f), cfg.context)) - mean) / std
        scores.append(F.mse_loss(model(x), x, reduction="none").mean().item())
    return np.array(scores)


def rank_auc(labels, scores):
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    pos = labels == 1
    return (ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum())


def main(cfg=AEConfig()):
    torch.manual_seed(0)
    os.makedirs(cfg.run_dir, exist_ok=True)
    ckpt = os.path.join(cfg.run_dir, "last.pt")
    train_files = sorted(glob.glob(cfg.train_glob))
    frames = torch.from_numpy(np.concatenate([stack_frames(np.load(f), cfg.context) for f in train_files]))
    mean, std = frames.mean(0), frames.std(0) + 1e-5
    data = TensorDataset((frames - mean) / std)
    loader = DataLoader(data, cfg.batch, shuffle=True, drop_last=True)

    model = DenseAE(cfg.context * cfg.n_mels, cfg.bottleneck)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)
    start, best_loss = resume(ckpt, model, optimizer, scheduler)
    best_path = os.path.join(cfg.run_dir, "best.pt")
    if start and os.path.exists(best_path):
        best_state = torch.load(best_path, map_location="cpu", weights_only=True)
    else:
        best_state = copy.deepcopy(model.state_dict())

    for epoch in range(start, cfg.epochs):
        model.train()
        total = 0.0
        for (x,) in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), x)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(x)
        scheduler.step()
        epoch_loss = total / (len(loader) * cfg.batch)
        if epoch_loss < best_loss:
            best_loss, best_state = epoch_loss, copy.deepcopy(model.state_dict())
            torch.save(best_state, best_path)
        save_checkpoint(ckpt, model, optimizer, scheduler, epoch, best_loss, (mean, std))
        print(f"epoch {epoch:03d} loss {epoch_loss:.4f} lr {scheduler.get_last_lr()[0]:.2e}")

    model.load_state_dict(best_state)
    train_scores = clip_scores(model, train_files, cfg, mean, std)
    threshold = np.percentile(train_scores, 90)
    test_files = sorted(glob.glob(cfg.test_glob))
    labels = np.array([int("anomaly" in os.path.basename(f)) for f in test_files])
    test_scores = clip_scores(model, test_files, cfg, mean, std)
    print(f"AUC {rank_auc(labels, test_scores):.4f}, threshold {threshold:.4f}, "
          f"flagged {(test_scores > threshold).mean():.2%} of test clips")


if __name__ == "__main__":
    main()
