"""12-lead ECG diagnostic superclasses (PTB-XL: NORM, MI, STTC, CD, HYP) with a small transformer.

Expects data/ptbxl_100hz.npz with X_train (N, 1000, 12), y_train (N, 5), X_val, y_val, produced
by the preprocessing notebook (records at 100 Hz, strat folds 1-8 train, 9 validation).
"""
import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

SUPERCLASSES = ["NORM", "MI", "STTC", "CD", "HYP"]


@dataclass
class TrainConfig:
    data: str = "data/ptbxl_100hz.npz"
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4
    patch: int = 10
    dropout: float = 0.1
    batch_size: int = 128
    epochs: int = 50
    lr: float = 5e-4
    weight_decay: float = 0.05
    warmup_frac: float = 0.1
    amp: bool = True
    out: str = "ecg_transformer.pt"


class ECGTransformer(nn.Module):
    def __init__(self, cfg, n_leads=12, length=1000, n_classes=len(SUPERCLASSES)):
        super().__init__()
        self.patch_embed = nn.Conv1d(n_leads, cfg.d_model, kernel_size=cfg.patch, stride=cfg.patch)
        n_tokens = length // cfg.patch
        self.cls = nn.Parameter(torch.zeros(1, 1, cfg.d_model))
        self.pos = nn.Parameter(torch.randn(1, n_tokens + 1, cfg.d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, 4 * cfg.d_model, cfg.dropout,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layers)
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, n_classes)

    def forward(self, x):
        tokens = self.patch_embed(x.transpose(1, 2)).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(x.size(0), -1, -1), tokens], dim=1) + self.pos
        return self.head(self.norm(self.encoder(tokens)[:, 0]))


class Trainer:
    def __init__(self, cfg, model, device):
        self.cfg, self.model, self.device = cfg, model.to(device), device
        self.use_amp = cfg.amp and device.type == "cuda"
        self.criterion = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.use_amp)
        self.scheduler = None

    def on_fit_start(self, steps_per_epoch):
        total = steps_per_epoch * self.cfg.epochs
        warmup = int(total * self.cfg.warmup_frac)

        def lr_lambda(step):
            if step < warmup:
                return (step + 1) / warmup
            return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda)

    def _forward(self, x):
        with torch.cuda.amp.autocast(enabled=self.use_amp):
            return self.model(x)

    def training_step(self, x, y):
        logits = self._forward(x)
        loss = self.criterion(logits.float(), y)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        return loss.item()

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        probs, targets = [], []
        for x, y in loader:
            probs.append(torch.sigmoid(self._forward(x.to(self.device)).float()).cpu())
            targets.append(y)
        return macro_auroc(torch.cat(probs), torch.cat(targets))

    def fit(self, train_loader, val_loader):
        self.on_fit_start(len(train_loader))
        best = 0.0
        for epoch in range(self.cfg.epochs):
            self.model.train()
            t0, losses = time.time(), []
            for x, y in train_loader:
                losses.append(self.training_step(x.to(self.device), y.to(self.device)))
            auc = self.validate(val_loader)
            print(f"epoch {epoch:02d}  loss {np.mean(losses):.4f}  val macro-AUROC {auc:.4f}  {time.time() - t0:.0f}s")
            if auc > best:
                best = auc
                torch.save(self.model.state_dict(), self.cfg.out)
        return best


def macro_auroc(scores, labels):
    aucs = []
    for k in range(labels.shape[1]):
        s, t = scores[:, k], labels[:, k]
        n_pos, n_neg = int(t.sum()), int((1 - t).sum())
        if n_pos == 0 or n_neg == 0:
            continue
        ranks = torch.empty_like(s)
        ranks[s.argsort()] = torch.arange(1, len(s) + 1, dtype=s.dtype)
        aucs.append(((ranks[t == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item())
    return float(np.mean(aucs))


def main(cfg=TrainConfig()):
    torch.manual_seed(0)
    data = np.load(cfg.data)
    mean = data["X_train"].mean(axis=(0, 1), keepdims=True)
    std = data["X_train"].std(axis=(0, 1), keepdims=True)

    def tensors(split):
        x = ((data[f"X_{split}"] - mean) / std).astype(np.float32)
        return TensorDataset(torch.from_numpy(x), torch.from_numpy(data[f"y_{split}"].astype(np.float32)))

    train_loader = DataLoader(tensors("train"), batch_size=cfg.batch_size, shuffle=True, drop_last=True, num_workers=2)
    val_loader = DataLoader(tensors("val"), batch_size=256)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    best = Trainer(cfg, ECGTransformer(cfg), device).fit(train_loader, val_loader)
    print(f"best macro-AUROC {best:.4f}")


if __name__ == "__main__":
    main()
